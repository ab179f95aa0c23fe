package partiql

import "strings"

// reserved holds PartiQL's reserved words (SQL-92's plus PartiQL's own).
// A bare identifier spelled like one cannot name an attribute; DynamoDB
// requires it in double quotes.
var reserved = func() map[string]bool {
	words := `absolute action add all allocate alter and any are as asc assertion at authorization avg
begin between bit bit_length both by cascade cascaded case cast catalog char character character_length
char_length check close coalesce collate collation column commit connect connection constraint
constraints continue convert corresponding count create cross current current_date current_time
current_timestamp current_user cursor date day deallocate dec decimal declare default deferrable
deferred delete desc describe descriptor diagnostics disconnect distinct domain double drop else end
escape except exception exec execute exists external extract false fetch first float for foreign found
from full get global go goto grant group having hour identity immediate in indicator initially inner
input insensitive insert int integer intersect interval into is isolation join key language last
leading left level like limit local lower match max min minute module month names national natural
nchar next no not null nullif numeric octet_length of on only open option or order outer output
overlaps pad partial position precision prepare preserve primary prior privileges procedure public
read real references relative restrict revoke right rollback rows schema scroll second section select
session session_user set size smallint some space sql sqlcode sqlerror sqlstate substring sum
system_user table temporary then time timestamp timezone_hour timezone_minute to trailing transaction
translate translation trim true union unique unknown update upper usage user using value values
varchar varying view when whenever where with work write year zone
missing pivot unpivot offset remove index let conflict do returning modified new old nothing
bag list sexp struct tuple string symbol blob clob boolean`
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}()

func isReserved(s string) bool { return reserved[strings.ToLower(s)] }

// operatorWords are keywords that stand for operators: met where a term
// should start, DynamoDB answers "Unexpected operator".
var operatorWords = map[string]bool{"and": true, "or": true, "is": true, "in": true, "like": true, "between": true}

// typeNames maps the type names IS accepts to the canonical names
// DynamoDB's checks use.
var typeNames = map[string]string{
	"missing": "MISSING", "null": "NULL",
	"bool": "BOOLEAN", "boolean": "BOOLEAN",
	"string": "STRING", "varchar": "STRING", "char": "STRING", "character": "STRING", "symbol": "STRING",
	"blob": "BLOB", "clob": "BLOB",
	"int": "NUMERIC", "int2": "NUMERIC", "int4": "NUMERIC", "int8": "NUMERIC", "integer": "NUMERIC",
	"integer2": "NUMERIC", "integer4": "NUMERIC", "integer8": "NUMERIC", "smallint": "NUMERIC",
	"bigint": "NUMERIC", "float": "NUMERIC", "real": "NUMERIC", "double": "NUMERIC", "decimal": "NUMERIC",
	"dec": "NUMERIC", "numeric": "NUMERIC", "number": "NUMERIC",
	"struct": "STRUCT", "tuple": "TUPLE", "list": "LIST", "bag": "BAG", "sexp": "SEXP",
	"date": "DATE", "time": "TIME", "timestamp": "TIMESTAMP",
}
