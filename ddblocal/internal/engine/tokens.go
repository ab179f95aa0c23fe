package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// Idempotency tokens (ClientRequestToken of TransactWriteItems and
// ExecuteTransaction).
//
// A token names a request by its meaning, not its bytes: the SDKs encode
// maps (items, expression values) in random order, so the body is
// compared in canonical form (canonicalHash). A transaction that changes
// items stores its token, the request's hash and its response in the same
// batch as its changes, under 0x00 'K' <token>: a retry after a crash
// that kept the commit is answered, not applied again. Open loads the
// tokens younger than ten minutes; older ones are deleted as they expire.

const tokenTTL = 10 * time.Minute

// CanonicalHash hashes a JSON request in canonical form: object members
// sorted by name, no insignificant space, strings and numbers as written
// (one serializer writes the same value the same way; it is the member
// order of maps that varies). A body that does not parse hashes as its
// bytes (it fails validation anyway). The form is built in one pass over
// the bytes: decoding into interface values and encoding them again cost
// a transaction a fifth of its time (ADR 0053).
func CanonicalHash(body []byte) [32]byte {
	if out, ok := Canonical(body); ok {
		return sha256.Sum256(out)
	}
	return sha256.Sum256(body)
}

// LegacyCanonicalHash is the hash of builds before the one-pass form
// (encoding/json's: strings escaped its way, members sorted by decoded
// name). A token stored by such a build is still matched by it for its
// ten minutes, so a retry across an upgrade is replayed, not refused.
func LegacyCanonicalHash(body []byte) [32]byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return sha256.Sum256(body)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(raw)
}

// Canonical returns the canonical form of body; false if it does not parse.
func Canonical(body []byte) ([]byte, bool) {
	c := canonicalizer{in: body}
	out, ok := c.value(make([]byte, 0, len(body)))
	if ok {
		c.space()
		ok = c.pos == len(body)
	}
	return out, ok
}

// canonicalizer writes the canonical form of the JSON text in, from pos.
type canonicalizer struct {
	in  []byte
	pos int
}

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the next value to out.
func (c *canonicalizer) value(out []byte) ([]byte, bool) {
	c.space()
	if c.pos >= len(c.in) {
		return out, false
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		return c.object(out)
	case ch == '[':
		c.pos++
		out = append(out, '[')
		c.space()
		if c.pos < len(c.in) && c.in[c.pos] == ']' {
			c.pos++
			return append(out, ']'), true
		}
		for {
			var ok bool
			if out, ok = c.value(out); !ok {
				return out, false
			}
			c.space()
			if c.pos >= len(c.in) {
				return out, false
			}
			switch c.in[c.pos] {
			case ',':
				c.pos++
				out = append(out, ',')
			case ']':
				c.pos++
				return append(out, ']'), true
			default:
				return out, false
			}
		}
	case ch == '"':
		s, ok := c.str()
		return append(out, s...), ok
	default:
		start := c.pos
		for c.pos < len(c.in) && isLiteral(c.in[c.pos]) {
			c.pos++
		}
		return append(out, c.in[start:c.pos]...), c.pos > start
	}
}

// member is one object member: its name as written, its value's
// canonical form in the object's scratch buffer.
type member struct {
	name       []byte
	start, end int
}

func (c *canonicalizer) object(out []byte) ([]byte, bool) {
	c.pos++ // '{'
	var members []member
	var scratch []byte
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		return append(out, "{}"...), true
	}
	for {
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return out, false
		}
		name, ok := c.str()
		if !ok {
			return out, false
		}
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return out, false
		}
		c.pos++
		start := len(scratch)
		if scratch, ok = c.value(scratch); !ok {
			return out, false
		}
		members = append(members, member{name, start, len(scratch)})
		c.space()
		if c.pos >= len(c.in) {
			return out, false
		}
		if c.in[c.pos] == '}' {
			c.pos++
			break
		}
		if c.in[c.pos] != ',' {
			return out, false
		}
		c.pos++
	}
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, m.name...), ':'), scratch[m.start:m.end]...)
	}
	return append(out, '}'), true
}

// str returns the string at pos, quotes included, as written.
func (c *canonicalizer) str() ([]byte, bool) {
	start := c.pos
	c.pos++ // '"'
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case '\\':
			c.pos += 2
		case '"':
			c.pos++
			return c.in[start:c.pos], true
		default:
			c.pos++
		}
	}
	return nil, false
}

// isLiteral reports a byte of a number, true, false or null.
func isLiteral(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '-' || b == '+' || b == '.' || b == 'E'
}

// TxToken is the token of the transaction being run.
type TxToken struct {
	Token string
	Hash  [32]byte
	// Shape completes the response as the operation returns it, before it
	// is stored (ExecuteTransaction adds its empty Responses).
	Shape func(out map[string]any)
	// Stored is set once the token was committed with the transaction.
	Stored bool
}

// Kv is an extra key written in a commit's batch.
type Kv struct{ key, value []byte }

// Record renders the token's durable entry: the request hash, the time
// in Unix milliseconds, then the response's JSON.
func (tk *TxToken) Record(out map[string]any, now time.Time) (Kv, error) {
	if tk.Shape != nil {
		tk.Shape(out)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return Kv{}, fmt.Errorf("ddblocal: encode transaction response: %w", err)
	}
	v := make([]byte, 0, 40+len(raw))
	v = append(v, tk.Hash[:]...)
	v = binary.BigEndian.AppendUint64(v, uint64(now.UnixMilli()))
	return Kv{storage.TokenKey(tk.Token), append(v, raw...)}, nil
}

// tokenCache remembers ClientRequestTokens for ten minutes, as DynamoDB
// does, so a retried transaction is answered without re-applying.
// A token is reserved while its transaction runs, so a retry sent before
// the first attempt finishes is refused instead of applied twice.
type tokenCache struct {
	mu     sync.Mutex
	m      map[string]tokenEntry
	pruned time.Time
}

type tokenEntry struct {
	hash    [32]byte
	resp    any
	at      time.Time
	running bool
	durable bool // stored under metaTokenKey
	// loaded: read from the store at Open, so possibly hashed by a build
	// before the one-pass canonical form (legacyCanonicalHash).
	loaded bool
}

// Begin looks a token up: it answers a finished transaction's response
// to replay, or an error (another request, or the first attempt still
// running); otherwise it reserves the token and the caller must call
// finish.
func (c *tokenCache) Begin(token string, hash [32]byte, body []byte, now time.Time) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[token]
	if ok && (e.running || now.Sub(e.at) <= tokenTTL) {
		if e.hash != hash && !(e.loaded && LegacyCanonicalHash(body) == e.hash) {
			return nil, &wire.APIError{Type: "IdempotentParameterMismatchException", Status: 400,
				Message: "The request uses the same client token as a previous, but non-identical request."}
		}
		if e.running {
			return nil, &wire.APIError{Type: "TransactionInProgressException", Status: 400,
				Message: "The transaction with the given request token is already in progress."}
		}
		return e.resp, nil
	}
	if c.m == nil {
		c.m = map[string]tokenEntry{}
	}
	c.m[token] = tokenEntry{hash: hash, at: now, running: true, durable: ok && e.durable}
	return nil, nil
}

// finish records the response of a transaction begun with token; a nil
// response (the transaction failed) releases the token. durable says the
// token was committed with the transaction. It returns the durable
// tokens that expired, for the caller to delete.
func (c *tokenCache) finish(token string, resp any, now time.Time, durable bool) (expired []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[token]
	if resp == nil {
		if e.durable {
			expired = append(expired, token) // an expired entry this attempt replaced
		}
		delete(c.m, token)
		return expired
	}
	e.resp, e.at, e.running, e.durable = resp, now, false, e.durable || durable
	c.m[token] = e
	// Expired tokens go at most once a minute, so the sweep's cost stays
	// proportional to the tokens it can drop.
	if now.Sub(c.pruned) < time.Minute {
		return expired
	}
	c.pruned = now
	for k, e := range c.m {
		if !e.running && now.Sub(e.at) > tokenTTL {
			if e.durable {
				expired = append(expired, k)
			}
			delete(c.m, k)
		}
	}
	return expired
}

// FinishToken ends a token's transaction and deletes the durable entries
// of expired tokens (unsynced: a crash that keeps one only makes Open
// delete it again).
func (s *Store) FinishToken(tk *TxToken, resp any) {
	expired := s.Tokens.finish(tk.Token, resp, s.Now(), tk.Stored)
	if len(expired) == 0 {
		return
	}
	b := s.DB.NewBatch()
	defer b.Close()
	for _, k := range expired {
		b.Delete(storage.TokenKey(k))
	}
	if err := b.CommitNoSync(); err != nil {
		s.Log.Error("delete expired request tokens", "err", err)
	}
}

// loadTokens reads the durable tokens at Open, keeping those younger than
// ten minutes and deleting the others.
func (s *Store) loadTokens() error {
	iter, err := s.DB.NewIter(storage.TokenSpan())
	if err != nil {
		return err
	}
	now := s.Now()
	b := s.DB.NewBatch()
	defer b.Close()
	for iter.First(); iter.Valid(); iter.Next() {
		k, v := iter.Key(), iter.Value()
		token := string(k[2:])
		if len(v) < 40 {
			b.Delete(k)
			continue
		}
		at := time.UnixMilli(int64(binary.BigEndian.Uint64(v[32:40])))
		if now.Sub(at) > tokenTTL {
			b.Delete(k)
			continue
		}
		e := tokenEntry{at: at, durable: true, loaded: true, resp: json.RawMessage(bytes.Clone(v[40:]))}
		copy(e.hash[:], v[:32])
		if s.Tokens.m == nil {
			s.Tokens.m = map[string]tokenEntry{}
		}
		s.Tokens.m[token] = e
	}
	if err := iter.Close(); err != nil {
		return err
	}
	return b.Commit()
}
