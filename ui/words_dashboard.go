package ui

// The dashboard's words beyond the bucket table (ADR 0085), kept apart
// from words.go's table so the two grow without touching each other:
// the codes the new sections show, in Portuguese.

// dashboardWords are the refusal reasons, the attempt outcome and the
// CSV tables the dashboard names.
var dashboardWords = map[string]string{
	// refusal reasons the gateway writes that words.go has no label for
	"NO_ADDRESS": "sem endereço no canal",
	// a CALL attempt once its outcome is recorded
	"CALLED": "ligação registrada",
	// the dashboard's CSV tables
	"buckets":    "Faixas de atraso",
	"promises":   "Promessas cumpridas e quebradas",
	"cure":       "Taxa de cura do mês",
	"contacts":   "Contatos de hoje e limite diário",
	"collectors": "Cobradores: fila e resultados",
	"shards":     "Agenda de hoje por shard",
}

// dword is a dashboard code in words: its own table first, then the
// pages' labels, else the code itself.
func dword(code string) string {
	if w, ok := dashboardWords[code]; ok {
		return w
	}
	return label(code)
}

// csvTables are the dashboard's CSV downloads (?table=), in page order.
var csvTables = []string{"buckets", "promises", "cure", "contacts", "collectors", "shards"}
