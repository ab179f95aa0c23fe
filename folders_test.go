package lastro_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// folderOf is the top folder of a module package ("contract" for
// lastro/contract/regua), "" for the root and packages outside the module.
func folderOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rest, "/")
	return top
}

// folderGraph is the folder map: an arrow from a folder to every other
// folder one of its packages imports, tests and test-support packages
// left out (they may reach across, as the engine's tests do).
func folderGraph(files []file) map[string]map[string][]string {
	g := map[string]map[string][]string{}
	for _, f := range files {
		from := folderOf(f.pkg)
		if from == "" || f.test {
			continue
		}
		for _, imp := range f.imports {
			to := folderOf(imp)
			if to == "" || to == from {
				continue
			}
			if g[from] == nil {
				g[from] = map[string][]string{}
			}
			why := f.pkg + " → " + imp
			if !slices.Contains(g[from][to], why) {
				g[from][to] = append(g[from][to], why)
			}
		}
	}
	return g
}

// cycles returns the strongly connected components of g with more than
// one folder (Tarjan's algorithm), each sorted, in a stable order.
func cycles(g map[string]map[string][]string) [][]string {
	var nodes []string
	for n := range g {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack, onStack[v] = append(stack, v), true
		var next []string
		for w := range g[v] {
			next = append(next, w)
		}
		sort.Strings(next)
		for _, w := range next {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack, onStack[w] = stack[:len(stack)-1], false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 {
			sort.Strings(comp)
			out = append(out, comp)
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return out
}

// TestFolderMapHasNoLoop: the top folders import one another in one
// direction only, so a reader can take the tree from the bottom up
// (collections, the store, then the domain, the engine, cmd/lastro). A
// loop names each arrow inside it and the imports that make it.
func TestFolderMapHasNoLoop(t *testing.T) {
	t.Parallel()
	files := moduleFiles(t)
	g := folderGraph(files)
	if len(g) < 10 {
		t.Fatalf("only %d folders with imports: the graph proves nothing", len(g))
	}
	for _, comp := range cycles(g) {
		var arrows []string
		for _, a := range comp {
			for _, b := range comp {
				if why, ok := g[a][b]; ok {
					arrows = append(arrows, fmt.Sprintf("  %s → %s (%s)", a, b, strings.Join(why, "; ")))
				}
			}
		}
		sort.Strings(arrows)
		t.Errorf("folders %v import one another in a loop:\n%s", comp, strings.Join(arrows, "\n"))
	}
}

// TestFolderLoopsAreFound: the check itself, on synthetic folder maps: a
// loop through a subpackage is found with its arrows; a DAG and test
// files that reach back up are not loops.
func TestFolderLoopsAreFound(t *testing.T) {
	t.Parallel()
	src := func(pkg string, test bool, imports ...string) file {
		return file{pkg: pkg, test: test, imports: imports}
	}
	loop := []file{
		src("lastro/contract", false, "lastro/agenda/regua"),
		src("lastro/agenda/regua", false, "lastro/policy"),
		src("lastro/agenda", false, "lastro/contract"),
		src("lastro/policy", false, "lastro/collections/errs"),
	}
	got := cycles(folderGraph(loop))
	if len(got) != 1 || !slices.Equal(got[0], []string{"agenda", "contract"}) {
		t.Fatalf("a loop through agenda/regua: found %v", got)
	}
	dag := []file{
		src("lastro/contract", false, "lastro/contract/regua"),
		src("lastro/contract/regua", false, "lastro/policy"),
		src("lastro/agenda", false, "lastro/contract"),
		src("lastro/policy", true, "lastro/agenda"), // a test may reach up
		src("lastro/policy/policytest", false, "lastro/agenda"),
	}
	// policytest is test support only by its name's suffix; it is a
	// package file here, so mark it as the module reader would.
	dag[4].test = true
	if got := cycles(folderGraph(dag)); len(got) != 0 {
		t.Fatalf("a DAG (tests reaching up): found loops %v", got)
	}
	if folderOf("lastro/contract/regua") != "contract" || folderOf("github.com/x/y") != "" || folderOf("lastro") != "" {
		t.Fatal("folderOf")
	}
}
