// Package strictjson holds the checks a JSON body passes before any
// decoder reads it, for the HTTP layer and the webhooks' own decoders
// alike (which are domain code and may not import the web package).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"lastro/collections/errs"
)

// maxDepth bounds the nesting NoDuplicateFields walks: far more than any
// body of the API needs (the Pix webhook's is five levels).
const maxDepth = 32

// NoDuplicateFields refuses a body that is not one JSON value, or in
// which any object, at any depth, names a field twice. encoding/json
// keeps the last of two and another parser may keep the first: a
// duplicate is how two readers of one body come to see two amounts.
// Errors are invalid_json and never echo the input.
func NoDuplicateFields(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := walk(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidJSON("trailing data after the JSON object")
	}
	return nil
}

func invalidJSON(msg string) error { return errs.E(errs.Invalid, "invalid_json", "%s", msg) }

func walk(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return invalidJSON("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return invalidJSON("malformed JSON body")
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return invalidJSON("malformed JSON body")
			}
			name, _ := k.(string)
			if seen[name] {
				return invalidJSON("a field appears twice")
			}
			seen[name] = true
			if err := walk(dec, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return invalidJSON("malformed JSON body")
		}
	case json.Delim('['):
		for dec.More() {
			if err := walk(dec, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return invalidJSON("malformed JSON body")
		}
	case json.Delim('}'), json.Delim(']'):
		return invalidJSON("malformed JSON body")
	}
	return nil
}
