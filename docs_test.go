package lastro_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// architectureDoc is the drawn architecture, a Mermaid flowchart whose
// boxes are packages and whose solid arrows are imports.
const architectureDoc = "docs/architecture.md"

// diagram is what TestArchitectureDiagram reads of the Mermaid block.
type diagram struct {
	layer  map[string]int    // node id → index of its subgraph, top first
	label  map[string]string // node id → package path (module-relative, or external)
	order  []string          // node ids as declared
	arrows []arrow
}

type arrow struct {
	from, to string
	dotted   bool // a call at run time, not an import
	line     int
}

var (
	diagramSubgraph = regexp.MustCompile(`^subgraph (\w+)\["[^"]*"\]$`)
	diagramNode     = regexp.MustCompile(`^(\w+)\["([^"]+)"\]$`)
	diagramArrow    = regexp.MustCompile(`^(\w+) (-->|-\.->)(\|"[^"]*"\|)? (\w+)$`)
)

// parseDiagram reads the one ```mermaid block of src. Every line of it
// must be a subgraph, a node, an arrow, "end", a %% comment or the
// flowchart header: a line it cannot read is an error, so no arrow is
// drawn that the test does not check.
func parseDiagram(src []byte) (diagram, []string) {
	d := diagram{layer: map[string]int{}, label: map[string]string{}}
	var problems []string
	in, blocks, layer := false, 0, -1
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```mermaid":
			in, blocks = true, blocks+1
			continue
		case in && line == "```":
			in = false
			continue
		case !in, line == "", strings.HasPrefix(line, "%%"), strings.HasPrefix(line, "flowchart "):
			continue
		case line == "end":
			if layer < 0 {
				problems = append(problems, "line "+strconv.Itoa(n)+": end outside a subgraph")
			}
			continue
		}
		if m := diagramSubgraph.FindStringSubmatch(line); m != nil {
			layer++
			continue
		}
		if m := diagramNode.FindStringSubmatch(line); m != nil {
			id, label := m[1], m[2]
			switch {
			case layer < 0:
				problems = append(problems, "line "+strconv.Itoa(n)+": node "+id+" is in no layer (subgraph)")
			case d.label[id] != "":
				problems = append(problems, "line "+strconv.Itoa(n)+": node "+id+" declared twice")
			case externalPath(label) && !strings.HasPrefix(id, "ext_"):
				problems = append(problems, "line "+strconv.Itoa(n)+": external package "+label+" needs an id starting ext_")
			case !externalPath(label) && id != diagramID(label):
				problems = append(problems, "line "+strconv.Itoa(n)+": node "+id+" should be named "+diagramID(label)+" after its package "+label)
			}
			d.layer[id], d.label[id] = layer, label
			d.order = append(d.order, id)
			continue
		}
		if m := diagramArrow.FindStringSubmatch(line); m != nil {
			d.arrows = append(d.arrows, arrow{from: m[1], to: m[4], dotted: m[2] == "-.->", line: n})
			continue
		}
		problems = append(problems, "line "+strconv.Itoa(n)+": cannot read "+strconv.Quote(line))
	}
	if blocks != 1 {
		problems = append(problems, "want exactly one ```mermaid block, found "+strconv.Itoa(blocks))
	}
	return d, problems
}

// externalPath reports whether a box names a package outside the module
// (its first element is a host name).
func externalPath(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return strings.Contains(first, ".")
}

// diagramID is the node id a module package's box must have: its path
// with every character Mermaid ids do not take as an underscore.
func diagramID(p string) string {
	return strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(p)
}

// goListDeps maps every package of the module with at least one non-test
// Go file to its transitive imports.
func goListDeps(t *testing.T) map[string]map[string]bool {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the diagram test needs the go command: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-e", "-f", `{{.ImportPath}} {{len .GoFiles}} {{len .CgoFiles}} {{join .Deps " "}}`, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[1] == "0" && f[2] == "0") {
			continue // tests only: nothing another package could import
		}
		deps := map[string]bool{}
		for _, d := range f[3:] {
			deps[d] = true
		}
		pkgs[f[0]] = deps
	}
	return pkgs
}

// TestArchitectureDiagram keeps docs/architecture.md true: every box is a
// package that exists, every solid arrow an import, and no arrow points
// up a layer.
func TestArchitectureDiagram(t *testing.T) {
	src, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	d, problems := parseDiagram(src)
	if len(d.order) < 10 || len(d.arrows) < 10 {
		problems = append(problems, fmt.Sprintf("read %d boxes and %d arrows: the diagram did not parse", len(d.order), len(d.arrows)))
	}
	problems = append(problems, checkDiagram(d, goListDeps(t))...)
	for _, p := range problems {
		t.Errorf("%s: %s", architectureDoc, p)
	}
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(design, []byte("(architecture.md)")) {
		t.Errorf("docs/design.md does not link the drawn architecture (architecture.md)")
	}
}

// checkDiagram checks d against the module's packages and their
// transitive imports (goListDeps).
func checkDiagram(d diagram, pkgs map[string]map[string]bool) []string {
	var problems []string
	imported := map[string]bool{} // every package some module package imports
	for _, deps := range pkgs {
		for dep := range deps {
			imported[dep] = true
		}
	}
	importPath := func(id string) string {
		if l := d.label[id]; externalPath(l) {
			return l
		}
		return module + "/" + d.label[id]
	}
	for _, id := range d.order {
		p := importPath(id)
		switch {
		case externalPath(d.label[id]) && !imported[p]:
			problems = append(problems, fmt.Sprintf("box %s names %s, which no package of the module imports", id, p))
		case !externalPath(d.label[id]) && pkgs[p] == nil:
			problems = append(problems, fmt.Sprintf("box %s names %s, which is not a package of the module (a folder with a non-test Go file)", id, d.label[id]))
		}
	}
	for _, a := range d.arrows {
		if d.label[a.from] == "" || d.label[a.to] == "" {
			problems = append(problems, fmt.Sprintf("line %d: arrow %s → %s joins a box that is not declared", a.line, a.from, a.to))
			continue
		}
		if d.layer[a.from] > d.layer[a.to] {
			problems = append(problems, fmt.Sprintf("line %d: arrow %s → %s points up a layer", a.line, d.label[a.from], d.label[a.to]))
		}
		if a.dotted {
			continue
		}
		if deps := pkgs[importPath(a.from)]; !deps[importPath(a.to)] {
			problems = append(problems, fmt.Sprintf("line %d: arrow %s --> %s, but %s does not import %s, directly or not",
				a.line, d.label[a.from], d.label[a.to], d.label[a.from], d.label[a.to]))
		}
	}
	return problems
}

// TestArchitectureDiagramCatchesDrift proves the checks on synthetic
// diagrams and packages: a line the parser cannot read, a box misnamed
// or outside a layer, a box with no package, an arrow that is no import,
// an arrow up a layer.
func TestArchitectureDiagramCatchesDrift(t *testing.T) {
	const head = "```mermaid\nflowchart TD\n  subgraph L1[\"a\"]\n    tenant[\"tenant\"]\n  end\n" +
		"  subgraph L2[\"b\"]\n    collections_kit[\"collections/kit\"]\n    collections_errs[\"collections/errs\"]\n" +
		"    ext_dynamodb[\"github.com/aws/aws-sdk-go-v2/service/dynamodb\"]\n  end\n"
	pkgs := map[string]map[string]bool{
		// go list's Deps are transitive: tenant imports the SDK through the kit.
		"lastro/tenant":           {"lastro/collections/kit": true, "lastro/collections/errs": true, "github.com/aws/aws-sdk-go-v2/service/dynamodb": true},
		"lastro/collections/kit":  {"lastro/collections/errs": true, "github.com/aws/aws-sdk-go-v2/service/dynamodb": true},
		"lastro/collections/errs": {},
	}
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"true arrows", "  tenant --> collections_kit\n  tenant --> collections_errs\n  collections_kit --> ext_dynamodb\n", true},
		{"a transitive import", "  tenant --> ext_dynamodb\n", true},
		{"a dotted arrow is no import", "  collections_errs -.->|\"calls\"| ext_dynamodb\n", true},
		{"an arrow that is no import", "  collections_errs --> collections_kit\n", false},
		{"an arrow up a layer", "  collections_kit -.->|\"x\"| tenant\n", false},
		{"an undeclared box", "  tenant --> policy\n", false},
		{"a box with no package", "  subgraph L3[\"c\"]\n    collections_gone[\"collections/gone\"]\n  end\n", false},
		{"an external box nothing imports", "  subgraph L3[\"c\"]\n    ext_x[\"example.com/x\"]\n  end\n", false},
		{"an external box without ext_", "  subgraph L3[\"c\"]\n    x[\"example.com/x\"]\n  end\n", false},
		{"a box misnamed", "  subgraph L3[\"c\"]\n    kit[\"collections/kit\"]\n  end\n", false},
		{"a box outside a layer", "    policy[\"policy\"]\n", false},
		{"an unreadable line", "  tenant ==> collections_kit\n", false},
		{"two arrows on a line", "  tenant --> collections_kit & collections_errs\n", false},
	} {
		d, problems := parseDiagram([]byte(head + c.body + "```\n"))
		problems = append(problems, checkDiagram(d, pkgs)...)
		if ok := len(problems) == 0; ok != c.ok {
			t.Errorf("%s: problems %q, want ok %v", c.name, problems, c.ok)
		}
	}
	if _, problems := parseDiagram([]byte(head + "```\n" + head + "```\n")); len(problems) == 0 {
		t.Errorf("two mermaid blocks: no problem reported")
	}
}
