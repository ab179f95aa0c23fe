package debtor

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// profilePostalAttr is the PROFILE's flag that a sealed postal address is
// on file (the address itself is inside the sealed personal data, like
// the phone and the e-mail).
const profilePostalAttr = "hasPostalAddress"

// Reaches reports whether the profile as read has an address for channel:
// the phone for SMS, WhatsApp and calls, the e-mail for EMAIL, a postal
// address for LETTER. It reads only the clear flags beside the sealed
// data, never the data, so the contact gateway decides "no address"
// before it spends a contact (ADR 0066).
func (p *ContactProfile) Reaches(channel string) bool {
	flag := ""
	switch channel {
	case "SMS", "WHATSAPP", "CALL":
		flag = "hasPhone"
	case "EMAIL":
		flag = "hasEmail"
	case "LETTER":
		flag = profilePostalAttr
	default:
		return false
	}
	v, ok := p.item[flag].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}
