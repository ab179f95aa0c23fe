// Package lastro_test holds the module's layer test: which packages and
// files may import what. It has no code of its own; it reads the module
// with `go list` and go/parser, so a forbidden import fails the build's
// tests instead of waiting for a review.
package lastro_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	module      = "lastro"
	echoPkg     = "github.com/labstack/echo/v4"
	webPkg      = "lastro/collections/web"
	ddblocalPkg = "lastro/ddblocal"
	dynamoPkg   = "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	pebblePkg   = "github.com/cockroachdb/pebble"
	kitPkg      = "lastro/collections/kit"
	streamsPkg  = "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	eventsPkg   = "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	streamPkg   = "lastro/stream"
)

// dynamoClientAllowed are the packages besides the kit that may import the
// DynamoDB service client; its types subpackage and feature/ are free.
var dynamoClientAllowed = map[string]string{
	kitPkg:                     "the engine's single DynamoDB client (ADR 0004)",
	"lastro/collections/table": "the control plane: CreateTable, DescribeTable, UpdateTable",
	"lastro/cmd/lastro":        "wiring: builds the client the kit gets, and the table tools",
	"lastro/ddblocal/ddbtest":  "test support: an SDK client on an in-memory embedded store",
}

// storagePkg is the storage engine's package, the only one that imports
// Pebble (ADR 0001, 0030): its tests included, and nothing else in ddblocal.
const storagePkg = "lastro/ddblocal/internal/storage"

// storeLayers are the embedded store's API-family packages under
// ddblocal/internal (ADR 0061), each with the families it may import:
// wire ← engine ← control, dataplane; dataplane ← txn ← statement;
// control ← backup; engine ← streams. The root imports them all; the
// leaf packages (av, expr, partiql, storage) may import none.
var storeLayers = map[string][]string{
	"wire":      nil,
	"engine":    {"wire"},
	"control":   {"engine", "wire"},
	"dataplane": {"engine", "wire"},
	"txn":       {"dataplane", "engine", "wire"},
	"statement": {"txn", "dataplane", "engine", "wire"},
	"streams":   {"engine", "wire"},
	"backup":    {"control", "engine", "wire"},
}

// storeInternal is the folder of the store's internal packages.
const storeInternal = ddblocalPkg + "/internal/"

// maintenanceScanAllowed are the maintenance-job packages that may call
// kit.MaintenanceScan (or MaintenanceScanWhere) outside tests: a
// whole-table read.
var maintenanceScanAllowed = map[string]string{
	"lastro/cmd/lastro":  "lastro cost compare: the seed's Scan + FilterExpression screen, measured on the command's own private store",
	"lastro/ops":         "offboarding's export, sweep and counts; migration backfills and verification (ADRs 0076, 0078)",
	"lastro/ops/migrate": "the migrations toolkit: backfills, plans and verification (ADR 0081)",
}

// pkg is what the test needs of `go list -json`.
type pkg struct {
	Dir, ImportPath                                              string
	GoFiles, CgoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles []string
}

// file is one parsed Go file of the module.
type file struct {
	pkg     string // import path
	rel     string // slash path from the module root
	test    bool
	imports []string
	ast     *ast.File
	fset    *token.FileSet
}

func TestLayers(t *testing.T) {
	t.Parallel()
	files := moduleFiles(t)
	if len(files) < 50 {
		t.Fatalf("read only %d files: is the module root the test's directory?", len(files))
	}
	var bad []string
	storageUsesPebble := false
	for _, f := range files {
		bad = append(bad, check(f)...)
		if f.pkg == storagePkg && slices.ContainsFunc(f.imports, func(imp string) bool { return within(imp, pebblePkg) }) {
			storageUsesPebble = true
		}
	}
	// The family rule would pass vacuously if a family were renamed.
	for name := range storeLayers {
		if !slices.ContainsFunc(files, func(f file) bool { return f.pkg == storeInternal+name }) {
			bad = append(bad, storeInternal+name+" has no files: update storeLayers")
		}
	}
	// The rule would pass vacuously if the engine moved elsewhere.
	if !storageUsesPebble {
		bad = append(bad, storagePkg+" no longer imports Pebble: update the storage rule")
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestLayerRulesCatchViolations feeds the rules made-up files, so a rule
// that silently stopped matching (a renamed path, a typo) is caught too.
func TestLayerRulesCatchViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		f       file
		wantBad bool
	}{
		{"echo in a domain service file", file{pkg: "lastro/debtor", rel: "debtor/service.go", imports: []string{echoPkg}}, true},
		{"echo subpackage in a domain file", file{pkg: "lastro/debtor", rel: "debtor/service.go", imports: []string{echoPkg + "/middleware"}}, true},
		{"web in a domain file", file{pkg: "lastro/policy", rel: "policy/charges.go", imports: []string{webPkg}}, true},
		{"echo in a domain http.go", file{pkg: "lastro/debtor", rel: "debtor/http.go", imports: []string{echoPkg}}, false},
		{"echo in a domain test", file{pkg: "lastro/debtor", rel: "debtor/service_test.go", test: true, imports: []string{echoPkg}}, false},
		{"echo in collections", file{pkg: "lastro/collections/idem", rel: "collections/idem/idem.go", imports: []string{echoPkg}}, false},
		{"ddblocal in a domain package", file{pkg: "lastro/debtor", rel: "debtor/service.go", imports: []string{ddblocalPkg}}, true},
		{"ddblocal subpackage in collections", file{pkg: "lastro/collections/kit", rel: "collections/kit/kit.go", imports: []string{"lastro/ddblocal/internal/expr"}}, true},
		{"ddbtest in a non-test package", file{pkg: "lastro/debtor/debtortest", rel: "debtor/debtortest/fixture.go", imports: []string{"lastro/ddblocal/ddbtest"}}, false},
		{"ddblocal in a test", file{pkg: "lastro/debtor", rel: "debtor/service_test.go", test: true, imports: []string{ddblocalPkg}}, false},
		{"ddblocal in cmd/lastro", file{pkg: "lastro/cmd/lastro", rel: "cmd/lastro/engine.go", imports: []string{ddblocalPkg}}, false},
		{"ddblocal inside ddblocal", file{pkg: "lastro/ddblocal/ddbtest", rel: "ddblocal/ddbtest/ddbtest.go", imports: []string{ddblocalPkg}}, false},
		{"dynamodb client in a domain package", file{pkg: "lastro/settlement", rel: "settlement/service.go", imports: []string{dynamoPkg}}, true},
		{"dynamodb types in a domain package", file{pkg: "lastro/settlement", rel: "settlement/service.go", imports: []string{dynamoPkg + "/types"}}, false},
		{"streams client in the stream package", file{pkg: "lastro/stream", rel: "stream/consumer.go", imports: []string{streamsPkg}}, true},
		{"streams types in the stream package", file{pkg: "lastro/stream", rel: "stream/consumer.go", imports: []string{streamsPkg + "/types"}}, false},
		{"streams client in the kit", file{pkg: kitPkg, rel: "collections/kit/streams.go", imports: []string{streamsPkg}}, false},
		{"dynamodb client in the kit", file{pkg: kitPkg, rel: "collections/kit/kit.go", imports: []string{dynamoPkg}}, false},
		{"eventbridge client in a domain package", file{pkg: "lastro/agenda", rel: "agenda/runner.go", imports: []string{eventsPkg}}, true},
		{"eventbridge types in cmd/lastro", file{pkg: "lastro/cmd/lastro", rel: "cmd/lastro/serve.go", imports: []string{eventsPkg + "/types"}}, true},
		{"eventbridge client in the stream", file{pkg: streamPkg, rel: "stream/eventbridge.go", imports: []string{eventsPkg}}, false},
		{"eventbridge client in the stream's tests", file{pkg: streamPkg, rel: "stream/eventbridge_test.go", test: true, imports: []string{eventsPkg}}, false},
		{"pebble in ddblocal outside storage", file{pkg: ddblocalPkg, rel: "ddblocal/exprs.go", imports: []string{pebblePkg + "/v2"}}, true},
		{"pebble in the old store file", file{pkg: ddblocalPkg, rel: "ddblocal/store.go", imports: []string{pebblePkg + "/v2/vfs"}}, true},
		{"pebble in a ddblocal internal test", file{pkg: ddblocalPkg, rel: "ddblocal/race_internal_test.go", test: true, imports: []string{pebblePkg + "/v2"}}, true},
		{"pebble in another internal package", file{pkg: "lastro/ddblocal/internal/av", rel: "ddblocal/internal/av/item.go", imports: []string{pebblePkg + "/v2"}}, true},
		{"pebble in a package named like storage", file{pkg: "lastro/ddblocal/internal/storagex", rel: "ddblocal/internal/storagex/db.go", imports: []string{pebblePkg + "/v2"}}, true},
		{"pebble in the storage package", file{pkg: storagePkg, rel: "ddblocal/internal/storage/db.go", imports: []string{pebblePkg + "/v2/vfs"}}, false},
		{"pebble in the storage package's tests", file{pkg: storagePkg, rel: "ddblocal/internal/storage/db_test.go", test: true, imports: []string{pebblePkg + "/v2"}}, false},
		{"engine importing a family above it", file{pkg: storeInternal + "engine", rel: "ddblocal/internal/engine/store.go", imports: []string{storeInternal + "control"}}, true},
		{"the data plane importing the transactions", file{pkg: storeInternal + "dataplane", rel: "ddblocal/internal/dataplane/item.go", imports: []string{storeInternal + "txn"}}, true},
		{"the control plane importing the data plane", file{pkg: storeInternal + "control", rel: "ddblocal/internal/control/control.go", imports: []string{storeInternal + "dataplane"}}, true},
		{"wire importing the engine", file{pkg: storeInternal + "wire", rel: "ddblocal/internal/wire/errors.go", imports: []string{storeInternal + "engine"}}, true},
		{"a family test importing a family above it", file{pkg: storeInternal + "txn", rel: "ddblocal/internal/txn/transact_test.go", test: true, imports: []string{storeInternal + "statement"}}, true},
		{"storage importing the engine", file{pkg: storagePkg, rel: "ddblocal/internal/storage/db.go", imports: []string{storeInternal + "engine"}}, true},
		{"a family importing the store's root", file{pkg: storeInternal + "backup", rel: "ddblocal/internal/backup/exports.go", imports: []string{ddblocalPkg}}, true},
		{"the transactions importing the data plane", file{pkg: storeInternal + "txn", rel: "ddblocal/internal/txn/transact.go", imports: []string{storeInternal + "dataplane", storeInternal + "engine"}}, false},
		{"backups importing the control plane", file{pkg: storeInternal + "backup", rel: "ddblocal/internal/backup/restore.go", imports: []string{storeInternal + "control"}}, false},
		{"a family importing a leaf package", file{pkg: storeInternal + "statement", rel: "ddblocal/internal/statement/partiql.go", imports: []string{storeInternal + "partiql", storeInternal + "av"}}, false},
		{"the root importing every family", file{pkg: ddblocalPkg, rel: "ddblocal/store.go", imports: []string{storeInternal + "statement", storeInternal + "backup", storeInternal + "streams"}}, false},
		{"client Scan in a domain package", parsed(t, "lastro/debtor", "debtor/scan.go", `package debtor
import ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
func f(c *ddb.Client) { c.Scan(nil, &ddb.ScanInput{}) }`), true},
		{"scan paginator in a domain package", parsed(t, "lastro/debtor", "debtor/scan.go", `package debtor
import "github.com/aws/aws-sdk-go-v2/service/dynamodb"
var _ = dynamodb.NewScanPaginator`), true},
		{"client Scan in the store's conformance tests", parsed(t, ddblocalPkg, "ddblocal/scan_test.go", `package ddblocal
import "github.com/aws/aws-sdk-go-v2/service/dynamodb"
func f(c *dynamodb.Client) { c.Scan(nil, &dynamodb.ScanInput{}) }`), false},
		{"a Scan that is no DynamoDB call", parsed(t, "lastro/debtor", "debtor/rows.go", `package debtor
type rows struct{}
func (rows) Scan() {}
func f(r rows) { r.Scan() }`), false},
		{"MaintenanceScan from a domain package", parsed(t, "lastro/debtor", "debtor/audit.go", `package debtor
func f(k interface{ MaintenanceScan() }) { k.MaintenanceScan() }`), true},
		{"MaintenanceScanWhere from a domain package", parsed(t, "lastro/portfolio", "portfolio/screen.go", `package portfolio
func f(k interface{ MaintenanceScanWhere() }) { k.MaintenanceScanWhere() }`), true},
		{"MaintenanceScanPages from a domain package", parsed(t, "lastro/debtor", "debtor/audit.go", `package debtor
func f(k interface{ MaintenanceScanPages() }) { k.MaintenanceScanPages() }`), true},
		{"MaintenanceScan from a test", parsed(t, "lastro/cmd/lastro", "cmd/lastro/audit_test.go", `package main
func f(k interface{ MaintenanceScan() }) { k.MaintenanceScan() }`), false},
	}
	for _, tt := range tests {
		if bad := check(tt.f); (len(bad) > 0) != tt.wantBad {
			t.Errorf("%s: violations %q, want some: %v", tt.name, bad, tt.wantBad)
		}
	}
}

// check returns f's violations of the layer rules, one line each.
func check(f file) []string {
	var bad []string
	under := func(prefix string) bool { return f.pkg == prefix || strings.HasPrefix(f.pkg, prefix+"/") }
	// engine is the wiring shared by cmd/lastro and the tests' fixture:
	// it registers every domain's routes on the web server.
	domain := !under(module+"/collections") && !under(module+"/ddblocal") && !under(module+"/cmd") && !under(module+"/engine")
	for _, imp := range f.imports {
		// Domain packages speak HTTP in http.go only: the rest is callable
		// without a web framework (jobs, the demo seeder, other services).
		if domain && !f.test && path.Base(f.rel) != "http.go" && (within(imp, echoPkg) || imp == webPkg) {
			bad = append(bad, fmt.Sprintf("%s imports %s: in a domain package only http.go may", f.rel, imp))
		}
		// The embedded store is a deployment choice made by the binary; the
		// engine sees only the SDK client (ddbtest-like helpers excepted).
		if within(imp, ddblocalPkg) && !f.test && !under(ddblocalPkg) && f.pkg != module+"/cmd/lastro" &&
			!strings.HasSuffix(path.Base(imp), "test") {
			bad = append(bad, fmt.Sprintf("%s imports %s: only cmd/lastro (and tests) may import the embedded store", f.rel, imp))
		}
		// One client: every data-plane request goes through the kit.
		if imp == dynamoPkg && !f.test {
			if _, ok := dynamoClientAllowed[f.pkg]; !ok {
				bad = append(bad, fmt.Sprintf("%s imports %s: only the kit reaches DynamoDB", f.rel, imp))
			}
		}
		// The Streams client is the kit's too (kit.Streams); cmd/lastro
		// builds it for AWS. Its types subpackage is free.
		if imp == streamsPkg && !f.test && f.pkg != kitPkg && f.pkg != module+"/cmd/lastro" {
			bad = append(bad, fmt.Sprintf("%s imports %s: only the kit reads DynamoDB Streams", f.rel, imp))
		}
		// One publisher: domain events reach EventBridge through the
		// stream's publisher only, which builds the client from a config.
		if within(imp, eventsPkg) && !under(streamPkg) {
			bad = append(bad, fmt.Sprintf("%s imports %s: only %s publishes to EventBridge", f.rel, imp, streamPkg))
		}
		if v := storeLayerViolation(f.pkg, imp); v != "" {
			bad = append(bad, fmt.Sprintf("%s imports %s: %s", f.rel, imp, v))
		}
		if within(imp, pebblePkg) && f.pkg != storagePkg {
			bad = append(bad, fmt.Sprintf("%s imports %s: only %s may", f.rel, imp, storagePkg))
		}
	}
	if f.ast != nil {
		bad = append(bad, checkScans(f)...)
	}
	return bad
}

// storeLayerViolation says why a package under ddblocal/internal may not
// import imp, or "" when it may: the families import one way
// (storeLayers), the leaves import no family, and nothing internal
// imports the store's root.
func storeLayerViolation(pkg, imp string) string {
	from, ok := strings.CutPrefix(pkg, storeInternal)
	if !ok {
		return ""
	}
	if imp == ddblocalPkg {
		return "the store's internal packages are below its root"
	}
	to, ok := strings.CutPrefix(imp, storeInternal)
	if _, family := storeLayers[to]; !ok || !family || to == from {
		return ""
	}
	allowed, family := storeLayers[from]
	if !family {
		return "a leaf package imports no API family (ADR 0061)"
	}
	if !slices.Contains(allowed, to) {
		return "the store's API families import one way (ADR 0061)"
	}
	return ""
}

// checkScans finds whole-table reads: a Scan on the DynamoDB client (any
// use of ScanInput or the Scan paginator, or a .Scan call in a file that
// imports the client) outside the kit and the store itself, and kit.MaintenanceScan outside the
// allowed maintenance jobs.
func checkScans(f file) []string {
	var bad []string
	client := ""
	for _, is := range f.ast.Imports {
		if p, _ := strconv.Unquote(is.Path.Value); p == dynamoPkg {
			client = "dynamodb"
			if is.Name != nil {
				client = is.Name.Name
			}
		}
	}
	_, maintenance := maintenanceScanAllowed[f.pkg]
	ast.Inspect(f.ast, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pos := fmt.Sprintf("%s:%d", f.rel, f.fset.Position(sel.Pos()).Line)
		// ddblocal is the store that answers Scan: its conformance tests
		// must call it.
		if f.pkg != kitPkg && client != "" && !within(f.pkg, ddblocalPkg) {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == client && strings.Contains(sel.Sel.Name, "Scan") {
				bad = append(bad, fmt.Sprintf("%s uses %s.%s: no Scan outside the kit", pos, client, sel.Sel.Name))
			} else if sel.Sel.Name == "Scan" {
				bad = append(bad, fmt.Sprintf("%s calls .Scan in a file with the DynamoDB client: no Scan outside the kit", pos))
			}
		}
		// MaintenanceScanPages (resumable, filtered) is the same whole-table read.
		if strings.HasPrefix(sel.Sel.Name, "MaintenanceScan") && f.pkg != kitPkg && !f.test && !maintenance {
			bad = append(bad, fmt.Sprintf("%s calls MaintenanceScan: only allowed maintenance jobs may", pos))
		}
		return true
	})
	return bad
}

// within reports whether imp is pkg or one of its subpackages.
func within(imp, pkg string) bool { return imp == pkg || strings.HasPrefix(imp, pkg+"/") }

// moduleFiles lists every package of the module with `go list` and parses
// each of its Go files, those of tests and other build tags included.
func moduleFiles(t *testing.T) []file {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the layer test needs the go command: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-e", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []file
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		for _, group := range []struct {
			names []string
			test  bool
		}{{p.GoFiles, false}, {p.CgoFiles, false}, {p.IgnoredGoFiles, false}, {p.TestGoFiles, true}, {p.XTestGoFiles, true}} {
			for _, name := range group.names {
				full := filepath.Join(p.Dir, name)
				rel, err := filepath.Rel(root, full)
				if err != nil {
					t.Fatal(err)
				}
				af, err := parser.ParseFile(fset, full, nil, parser.SkipObjectResolution)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				f := file{pkg: p.ImportPath, rel: filepath.ToSlash(rel), test: group.test || strings.HasSuffix(name, "_test.go") || testSupport(p.ImportPath), ast: af, fset: fset}
				for _, is := range af.Imports {
					imp, _ := strconv.Unquote(is.Path.Value)
					f.imports = append(f.imports, imp)
				}
				files = append(files, f)
			}
		}
	}
	return files
}

// parsed builds a file from source, for the rules' own test.
func parsed(t *testing.T, pkgPath, rel, src string) file {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	f := file{pkg: pkgPath, rel: rel, test: strings.HasSuffix(rel, "_test.go"), ast: af, fset: fset}
	for _, is := range af.Imports {
		imp, _ := strconv.Unquote(is.Path.Value)
		f.imports = append(f.imports, imp)
	}
	return f
}

// testSupport reports whether a package exists only for tests (its name
// ends in "test", like ddblocal/ddbtest or engine/enginetest): its files
// follow the rules of test files.
func testSupport(pkg string) bool { return strings.HasSuffix(path.Base(pkg), "test") }
