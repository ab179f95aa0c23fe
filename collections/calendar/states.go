package calendar

import "time"

// stateHoliday is a fixed-date holiday of one state (UF) on which banks in
// that state do no business: a state's own holidays come from its state
// law (Lei 9.093/1995 lets a state fix its "data magna"), and the banks
// of the state close on them, so a due date on one is payable the next
// business day there without charges (docs/adr/0065).
type stateHoliday struct {
	month time.Month
	day   int
	name  string
	law   string // the state law that makes it a holiday, as the table in ADR 0065 names it
	from  int    // first year it applies (0: always, as far as this calendar goes)
}

// stateHolidays are the fixed-date state bank holidays by UF. Only fixed
// dates: holidays a state law moves to the nearest Friday or Sunday in a
// given year (AC, SC) are listed on their legal date, and a tenant adds a
// year's moved observance to its own list. Dates that coincide with a
// national holiday (DF and MG on Apr 21) are still listed: the table is
// the state's calendar, and the duplicate costs nothing.
var stateHolidays = map[string][]stateHoliday{
	"AC": {
		{time.January, 20, "Dia do Católico", "Lei estadual 3.137/2016", 2016},
		{time.January, 23, "Dia do Evangélico", "Lei estadual 1.538/2004", 2004},
		{time.March, 8, "Dia Internacional da Mulher", "Lei estadual 1.411/2001", 2001},
		{time.June, 15, "Aniversário do Estado do Acre", "Lei estadual 14/1964", 0},
		{time.September, 5, "Dia da Amazônia", "Lei estadual 243/1968", 0},
		{time.November, 17, "Tratado de Petrópolis", "Lei estadual 57/1965", 0},
	},
	"AL": {
		{time.June, 24, "São João", "lei estadual de feriados de Alagoas", 0},
		{time.June, 29, "São Pedro", "lei estadual de feriados de Alagoas", 0},
		{time.September, 16, "Emancipação Política de Alagoas", "lei estadual de feriados de Alagoas", 0},
	},
	"AM": {
		{time.September, 5, "Elevação do Amazonas à categoria de Província", "lei estadual do Amazonas", 0},
	},
	"AP": {
		{time.March, 19, "Dia de São José, padroeiro do Amapá", "lei estadual do Amapá", 0},
		{time.September, 13, "Criação do Território Federal do Amapá", "lei estadual do Amapá", 0},
	},
	"BA": {
		{time.July, 2, "Independência da Bahia", "Constituição do Estado da Bahia", 0},
	},
	"CE": {
		{time.March, 19, "Dia de São José, padroeiro do Ceará", "lei estadual do Ceará", 0},
		{time.March, 25, "Data Magna do Ceará (abolição da escravatura)", "lei estadual do Ceará", 0},
	},
	"DF": {
		{time.April, 21, "Fundação de Brasília", "lei distrital", 0},
		{time.November, 30, "Dia do Evangélico", "lei distrital", 0},
	},
	"ES": {},
	"GO": {},
	"MA": {
		{time.July, 28, "Adesão do Maranhão à Independência do Brasil", "lei estadual do Maranhão", 0},
	},
	"MG": {
		{time.April, 21, "Data Magna de Minas Gerais", "Constituição do Estado de Minas Gerais", 0},
	},
	"MS": {
		{time.October, 11, "Criação do Estado de Mato Grosso do Sul", "lei estadual de Mato Grosso do Sul", 0},
	},
	"MT": {
		{time.November, 20, "Dia da Consciência Negra", "lei estadual de Mato Grosso", 0},
	},
	"PA": {
		{time.August, 15, "Adesão do Grão-Pará à Independência do Brasil", "lei estadual do Pará", 0},
	},
	"PB": {
		{time.August, 5, "Fundação do Estado da Paraíba", "lei estadual da Paraíba", 0},
	},
	"PE": {
		{time.March, 6, "Data Magna de Pernambuco (Revolução Pernambucana)", "lei estadual de Pernambuco", 0},
		{time.June, 24, "São João", "lei estadual de Pernambuco", 0},
	},
	"PI": {
		{time.March, 13, "Batalha do Jenipapo", "lei estadual do Piauí", 0},
		{time.October, 19, "Dia do Piauí", "lei estadual do Piauí", 0},
	},
	"PR": {
		{time.December, 19, "Emancipação Política do Paraná", "lei estadual do Paraná", 0},
	},
	"RJ": {
		{time.April, 23, "Dia de São Jorge", "Lei estadual 5.198/2008", 2008},
		{time.November, 20, "Dia de Zumbi dos Palmares e da Consciência Negra", "Lei estadual 4.007/2002", 2002},
	},
	"RN": {
		{time.October, 3, "Mártires de Cunhaú e Uruaçu", "Lei estadual 8.913/2006", 2007},
	},
	"RO": {
		{time.January, 4, "Criação do Estado de Rondônia", "lei estadual de Rondônia", 0},
		{time.June, 18, "Dia do Evangélico", "lei estadual de Rondônia", 0},
	},
	"RR": {
		{time.October, 5, "Criação do Estado de Roraima", "lei estadual de Roraima", 0},
	},
	"RS": {
		{time.September, 20, "Revolução Farroupilha", "Lei estadual 4.850/1964", 0},
	},
	"SC": {
		{time.August, 11, "Data Magna de Santa Catarina", "lei estadual de Santa Catarina", 0},
		{time.November, 25, "Dia de Santa Catarina de Alexandria", "lei estadual de Santa Catarina", 0},
	},
	"SE": {
		{time.July, 8, "Emancipação Política de Sergipe", "lei estadual de Sergipe", 0},
	},
	"SP": {
		{time.July, 9, "Revolução Constitucionalista de 1932", "Lei estadual 9.497/1997", 1997},
	},
	"TO": {
		{time.March, 18, "Autonomia do Estado do Tocantins", "Lei estadual 960/1998", 1998},
		{time.September, 8, "Nossa Senhora da Natividade, padroeira do Tocantins", "lei estadual do Tocantins", 0},
		{time.October, 5, "Criação do Estado do Tocantins", "lei estadual do Tocantins", 0},
	},
}

// HasStateCalendar reports whether uf is one of the 27 UFs this package
// has a state calendar for (possibly empty: ES and GO have no fixed-date
// bank holiday of their own in this table).
func HasStateCalendar(uf string) bool {
	_, ok := stateHolidays[uf]
	return ok
}

// StateBankHolidays lists the fixed-date state bank holidays of uf in
// year, sorted by date; none for an unknown UF. The national ones are not
// included (NationalBankHolidays).
func StateBankHolidays(uf string, year int) []Holiday {
	var out []Holiday
	for _, h := range stateHolidays[uf] {
		if year >= h.from {
			out = append(out, Holiday{D(year, h.month, h.day), h.name})
		}
	}
	sortHolidays(out)
	return out
}

// Zones of Brazil's four offsets that a debtor's state implies. Brazil has
// kept no daylight saving time since 2019, but the zone database still
// knows the older rules, so zones are named, never fixed offsets.
const (
	ZoneSaoPaulo    = "America/Sao_Paulo"    // UTC−3: most states and the DF
	ZoneRioBranco   = "America/Rio_Branco"   // UTC−5: Acre
	ZoneManaus      = "America/Manaus"       // UTC−4: Amazonas (east and centre)
	ZoneEirunepe    = "America/Eirunepe"     // UTC−5: western Amazonas, only when given explicitly
	ZoneCuiaba      = "America/Cuiaba"       // UTC−4: Mato Grosso
	ZoneCampoGrande = "America/Campo_Grande" // UTC−4: Mato Grosso do Sul
	ZonePortoVelho  = "America/Porto_Velho"  // UTC−4: Rondônia
	ZoneBoaVista    = "America/Boa_Vista"    // UTC−4: Roraima
	ZoneNoronha     = "America/Noronha"      // UTC−2: Fernando de Noronha (PE), only when given explicitly
)

// ufZones are the states whose zone is not São Paulo's. A state split
// between zones (Amazonas, Pernambuco with Fernando de Noronha) derives the
// zone of most of its people; the other one has to be given explicitly.
var ufZones = map[string]string{
	"AC": ZoneRioBranco,
	"AM": ZoneManaus,
	"MT": ZoneCuiaba,
	"MS": ZoneCampoGrande,
	"RO": ZonePortoVelho,
	"RR": ZoneBoaVista,
}

// ZoneOfUF is the IANA zone a debtor in uf lives in when its profile names
// none: "" for an unknown UF (the caller then uses the tenant's zone).
func ZoneOfUF(uf string) string {
	if z, ok := ufZones[uf]; ok {
		return z
	}
	if HasStateCalendar(uf) {
		return ZoneSaoPaulo
	}
	return ""
}

// BrazilianZones are the IANA zones a debtor's profile may name
// explicitly: the zones of Brazil's territory (including those no UF
// derives, western Amazonas and Fernando de Noronha) and the older city
// zones that are links to the same rules.
var BrazilianZones = []string{
	ZoneSaoPaulo, ZoneRioBranco, ZoneManaus, ZoneEirunepe, ZoneCuiaba, ZoneCampoGrande, ZonePortoVelho, ZoneBoaVista, ZoneNoronha,
	"America/Araguaina", "America/Bahia", "America/Belem", "America/Fortaleza", "America/Maceio", "America/Recife",
	"America/Santarem",
}

// LoadZone loads an IANA zone from the embedded zone database (the
// binary's time/tzdata, so a host without /usr/share/zoneinfo answers the
// same).
func LoadZone(name string) (*time.Location, error) { return time.LoadLocation(name) }
