package stream_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"lastro/stream"
)

const schemaDir = "../docs/events"

// fixtureEvents translates every record of the translator's table.
func fixtureEvents(t *testing.T) []stream.Event {
	t.Helper()
	var out []stream.Event
	for _, c := range translateCases() {
		evs, err := stream.Translate(c.record(t))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out = append(out, evs...)
	}
	return out
}

// schemas compiles every schema file, by event type and version.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.v*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[string]*jsonschema.Schema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		url := "file:///" + filepath.Base(f)
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = s
	}
	return out
}

func TestEveryEventValidatesAgainstItsSchema(t *testing.T) {
	t.Parallel()
	sch := schemas(t)
	emitted := map[string]bool{}
	for _, e := range fixtureEvents(t) {
		name := e.Type + ".v1"
		if e.SchemaVersion != 1 {
			t.Fatalf("%s: version %d", e.Type, e.SchemaVersion)
		}
		s, ok := sch[name]
		if !ok {
			t.Errorf("%s has no schema file %s.json", e.Type, name)
			continue
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s does not validate: %v\n%s", e.Type, err, b)
		}
		emitted[name] = true
	}
	for name := range sch {
		if !emitted[name] {
			t.Errorf("schema %s has no emitter in the fixture", name)
		}
	}
	for _, typ := range stream.EventTypes() {
		if !emitted[typ+".v1"] {
			t.Errorf("event type %s is never emitted by the fixture", typ)
		}
	}
}

// TestSchemasRejectWhatTheyShould guards the schemas themselves: a schema
// that accepted anything would make the test above vacuous.
func TestSchemasRejectWhatTheyShould(t *testing.T) {
	t.Parallel()
	sch := schemas(t)
	evs := fixtureEvents(t)
	i := slices.IndexFunc(evs, func(e stream.Event) bool { return e.Type == stream.BucketChanged })
	base, err := json.Marshal(evs[i])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"missing tenant", func(m map[string]any) { delete(m, "tenant") }},
		{"unknown data field", func(m map[string]any) { m["data"].(map[string]any)["name"] = "someone" }},
		{"unknown envelope field", func(m map[string]any) { m["document"] = "x" }},
		{"amount as a string", func(m map[string]any) { m["data"].(map[string]any)["outstandingCents"] = "10.00" }},
		{"debtor key not a key", func(m map[string]any) { m["debtorKey"] = "529.982.247-25" }},
		{"unknown bucket", func(m map[string]any) { m["data"].(map[string]any)["toBucket"] = "D999" }},
		{"instant for a date", func(m map[string]any) { m["data"].(map[string]any)["oldestOverdueDueDate"] = "2026-09-10T00:00:00Z" }},
		{"wrong type", func(m map[string]any) { m["type"] = stream.ContractCured }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var m map[string]any
			if err := json.Unmarshal(base, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			b, _ := json.Marshal(m)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch["BucketChanged.v1"].Validate(inst); err == nil {
				t.Fatalf("accepted %s", b)
			}
		})
	}
}
