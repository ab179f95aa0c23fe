package wire

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
)

// HandlerFunc serves one operation: it decodes body and returns the
// response value (marshalled as JSON) or an error.
type HandlerFunc func(ctx context.Context, body []byte) (any, error)

// Decode unmarshals a request body, answering malformed JSON with
// DynamoDB's SerializationException.
func Decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Serialization("Unexpected value type in payload for member " + te.Field)
		}
		return Serialization("Malformed JSON in request body")
	}
	return nil
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
