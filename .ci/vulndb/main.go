// Command vulndb lays out the Go vulnerability database in the layout
// govulncheck reads with -db file://DIR (index/db.json, index/modules.json,
// index/vulns.json, ID/<id>.json), from the OSV entries the
// golang.org/x/vulndb module ships in data/osv. CI has no network but the
// module proxy, so it cannot reach the database's own server; the module
// is the same data, fetched like any module and pinned by version.
//
// Usage:
//
//	go run ./.ci/vulndb <vulndb module dir> <out dir>
//	govulncheck -format json ... | go run ./.ci/vulndb check [-allow ID,ID]
//
// check fails, as govulncheck does, on a vulnerability the code calls,
// except the IDs allowed, each with its reason in .ci/run.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

type modVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type module struct {
	Path  string    `json:"path"`
	Vulns []modVuln `json:"vulns"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "check" {
		fs := flag.NewFlagSet("check", flag.ExitOnError)
		allow := fs.String("allow", "", "comma-separated vulnerability IDs that are not failures")
		_ = fs.Parse(os.Args[2:])
		if err := check(os.Stdin, os.Stdout, strings.Split(*allow, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "vulndb check:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: vulndb <vulndb module dir> <out dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	files, err := filepath.Glob(filepath.Join(src, "data", "osv", "GO-*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no OSV entries under %s (err %v)", src, err)
	}
	if err := os.MkdirAll(filepath.Join(out, "ID"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
		return err
	}
	mods := map[string]*module{}
	var vulns []modVuln
	var newest time.Time
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), raw, 0o644); err != nil {
			return err
		}
		if e.Modified.After(newest) {
			newest = e.Modified
		}
		vulns = append(vulns, modVuln{ID: e.ID, Modified: e.Modified})
		// The index's optional "fixed" is left out: govulncheck then reads
		// each entry of a module it uses and decides from the ranges there.
		for _, a := range e.Affected {
			m := mods[a.Package.Name]
			if m == nil {
				m = &module{Path: a.Package.Name}
				mods[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, modVuln{ID: e.ID, Modified: e.Modified})
		}
	}
	list := make([]*module, 0, len(mods))
	for _, m := range mods {
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	if newest.IsZero() {
		newest = time.Now().UTC().Truncate(time.Second)
	}
	for name, v := range map[string]any{"db.json": map[string]time.Time{"modified": newest}, "modules.json": list, "vulns.json": vulns} {
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "index", name), raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// finding is the part of govulncheck's JSON stream check reads.
type finding struct {
	Finding *struct {
		OSV   string `json:"osv"`
		Fixed string `json:"fixed_version"`
		Trace []struct {
			Module   string `json:"module"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

// check reads govulncheck's JSON stream and fails on every vulnerability
// a function of the code reaches (a trace whose first frame names a
// function), unless allowed; it prints each one it saw.
func check(r io.Reader, w io.Writer, allowed []string) error {
	allow := map[string]bool{}
	for _, id := range allowed {
		if id = strings.TrimSpace(id); id != "" {
			allow[id] = true
		}
	}
	called := map[string]string{}
	dec := json.NewDecoder(r)
	for {
		var f finding
		if err := dec.Decode(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("reading govulncheck's output: %w", err)
		}
		if f.Finding == nil || len(f.Finding.Trace) == 0 || f.Finding.Trace[0].Function == "" {
			continue
		}
		t := f.Finding.Trace[0]
		called[f.Finding.OSV] = fmt.Sprintf("%s (%s %s.%s; fixed in %q)", f.Finding.OSV, t.Module, t.Package, t.Function, f.Finding.Fixed)
	}
	var failed []string
	for id, what := range called {
		if allow[id] {
			fmt.Fprintln(w, "allowed:", what)
			continue
		}
		failed = append(failed, what)
	}
	sort.Strings(failed)
	for _, f := range failed {
		fmt.Fprintln(w, "called:", f)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d vulnerabilities reached from the code", len(failed))
	}
	fmt.Fprintf(w, "no vulnerability reached from the code (%d allowed)\n", len(called)-len(failed))
	return nil
}
