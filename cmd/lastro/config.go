package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"lastro/collections/egress"
	"lastro/collections/httpserve"
	"lastro/collections/web"
)

// config is the engine's configuration: environment variables (12-factor),
// each with a flag twin that wins when given.
type config struct {
	Endpoint   string           // LASTRO_DYNAMODB_ENDPOINT; empty runs the embedded store
	Table      string           // LASTRO_TABLE
	DataDir    string           // LASTRO_DATA_DIR; ":memory:" keeps everything in memory
	Addr       string           // LASTRO_ADDR
	AdminToken string           // LASTRO_ADMIN_TOKEN; generated when empty
	Now        string           // LASTRO_NOW (RFC 3339) freezes the clock
	Shards     int              // LASTRO_SHARDS
	KMSKeyID   string           // LASTRO_KMS_KEY_ID
	DataKey    string           // LASTRO_DATA_KEY (base64, 32 bytes)
	DataKeyID  string           // LASTRO_DATA_KEY_ID: the id the data key's seals record
	OldKeys    string           // LASTRO_OLD_DATA_KEYS: id:base64,... kept to open, never to seal
	OldKMSKeys string           // LASTRO_OLD_KMS_KEY_IDS: KMS key ARNs kept to open
	StoreAddr  string           // LASTRO_STORE_ADDR; empty keeps the embedded store off the network
	StoreCache int64            // LASTRO_STORE_CACHE_MB, in bytes: the embedded store's block cache
	AgendaHour int              // LASTRO_AGENDA_HOUR: local hour each tenant's agenda runs from
	Scheduler  bool             // LASTRO_SCHEDULER: lastro serve runs the agenda on its own ("off" disables)
	Stream     bool             // LASTRO_STREAM: lastro serve also runs the stream consumer (auto: with the embedded store)
	Limits     httpserve.Limits // LASTRO_READ_TIMEOUT ... LASTRO_MAX_IN_FLIGHT
	// PSPSandbox: serve mounts the sandbox PSP for tenants without one
	// (LASTRO_PSP_SANDBOX auto|on|off|force, resolved against the endpoint
	// by loadConfig: docs/adr/0054-sandbox-psp-is-a-demo-tool.md).
	PSPSandbox bool
	// PSPSandboxForced: mounted although an endpoint is set (force).
	PSPSandboxForced bool
	// TrustedProxies: LASTRO_TRUSTED_PROXIES, the peers whose
	// X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// Egress: LASTRO_EGRESS_ALLOW, the outbound policy of the URLs tenants
	// set (webhooks, PSP): strict unless CIDRs or loopback are allowed.
	Egress *egress.Policy
	// PSPWebhookTLSAddr, when set, is the mutual-TLS listener for PSP
	// webhooks (LASTRO_PSP_WEBHOOK_TLS_ADDR), with the server certificate
	// and key files PSPWebhookTLSCert and PSPWebhookTLSKey
	// (docs/adr/0070).
	PSPWebhookTLSAddr, PSPWebhookTLSCert, PSPWebhookTLSKey string
	// PixReconcileEvery is how often serve reads back the open Pix
	// charges whose check is due (LASTRO_PIX_RECONCILE_EVERY); 0: never.
	PixReconcileEvery time.Duration
}

// limitVars are the HTTP servers' limits (serve's API and store, and ddb
// serve), each a variable with a flag twin like configVars.
var limitVars = []struct{ env, flag, def, help string }{
	{"LASTRO_READ_HEADER_TIMEOUT", "read-header-timeout", "5s", "time to read a request's line and headers"},
	{"LASTRO_READ_TIMEOUT", "read-timeout", "30s", "time to read a whole request, body included"},
	{"LASTRO_WRITE_TIMEOUT", "write-timeout", "60s", "time to write an answer, from the end of the request's headers"},
	{"LASTRO_IDLE_TIMEOUT", "idle-timeout", "120s", "time a kept-alive connection may wait for its next request"},
	{"LASTRO_MAX_CONNS", "max-conns", "1024", "open connections; past it a new one is answered 503 and closed"},
	{"LASTRO_MAX_IN_FLIGHT", "max-in-flight", "256", "requests handled at once; past it 503 with Retry-After"},
	{"LASTRO_MAX_CONNS_PER_ADDR", "max-conns-per-addr", "128", "open connections of one client address (an IPv6 /64; behind a proxy, the proxy's); past it 503 and closed"},
	{"LASTRO_MAX_IN_FLIGHT_WEBHOOKS", "max-in-flight-webhooks", "128", "webhook requests (/v1/webhooks/) handled at once, apart from the API's; past it 503 with Retry-After"},
	{"LASTRO_WEBHOOK_BODY_TIMEOUT", "webhook-body-timeout", "5s", "time a webhook's body may take to arrive after its headers (at most the read timeout)"},
}

// envString adds the flag name to fs: its default is the variable env
// when set, def otherwise, and its help names the variable.
func envString(fs *flag.FlagSet, getenv func(string) string, env, name, def, help string) *string {
	if e := getenv(env); e != "" {
		def = e
	}
	return fs.String(name, def, help+" ("+env+")")
}

// addLimitFlags adds the limit flags to fs (defaults from getenv); the
// returned function reads and checks them after fs.Parse.
func addLimitFlags(fs *flag.FlagSet, getenv func(string) string) func() (httpserve.Limits, error) {
	vals := map[string]*string{}
	for _, v := range limitVars {
		vals[v.env] = envString(fs, getenv, v.env, v.flag, v.def, v.help)
	}
	return func() (httpserve.Limits, error) {
		l := httpserve.DefaultLimits()
		for env, dst := range map[string]*time.Duration{"LASTRO_READ_HEADER_TIMEOUT": &l.ReadHeaderTimeout,
			"LASTRO_READ_TIMEOUT": &l.ReadTimeout, "LASTRO_WRITE_TIMEOUT": &l.WriteTimeout, "LASTRO_IDLE_TIMEOUT": &l.IdleTimeout,
			"LASTRO_WEBHOOK_BODY_TIMEOUT": &l.WebhookBodyTimeout} {
			d, err := time.ParseDuration(*vals[env])
			if err != nil || d <= 0 {
				return l, fmt.Errorf("%s must be a positive duration such as 30s, got %q", env, *vals[env])
			}
			*dst = d
		}
		for env, dst := range map[string]*int{"LASTRO_MAX_CONNS": &l.MaxConns, "LASTRO_MAX_IN_FLIGHT": &l.MaxInFlight,
			"LASTRO_MAX_CONNS_PER_ADDR": &l.MaxConnsPerAddr, "LASTRO_MAX_IN_FLIGHT_WEBHOOKS": &l.MaxInFlightWebhooks} {
			n, err := strconv.Atoi(*vals[env])
			if err != nil || n < 1 || n > 1_000_000 {
				return l, fmt.Errorf("%s must be 1-1000000, got %q", env, *vals[env])
			}
			*dst = n
		}
		return l, nil
	}
}

// configVars documents every variable once: name, flag, default, meaning.
var configVars = []struct{ env, flag, def, help string }{
	{"LASTRO_DYNAMODB_ENDPOINT", "dynamodb-endpoint", "", "DynamoDB endpoint; empty runs the embedded store"},
	{"LASTRO_TABLE", "table", "lastro", "table name"},
	{"LASTRO_DATA_DIR", "data-dir", "./lastro-data", "embedded store data directory (:memory: for none)"},
	{"LASTRO_ADDR", "addr", "127.0.0.1:8080", "HTTP listen address"},
	{"LASTRO_ADMIN_TOKEN", "admin-token", "", "admin token for POST /v1/tenants, at least 32 characters; generated and printed when empty"},
	{"LASTRO_NOW", "now", "", "freeze the clock at this RFC 3339 instant (demos, tests)"},
	{"LASTRO_SHARDS", "shards", "16", "agenda shards for new tenants"},
	{"LASTRO_KMS_KEY_ID", "kms-key-id", "", "KMS key for personal data (production)"},
	{"LASTRO_DATA_KEY", "data-key", "", "base64 32-byte data key; generated in the data dir when empty"},
	{"LASTRO_DATA_KEY_ID", "data-key-id", "v1", "id of LASTRO_DATA_KEY, recorded in what it seals (v1: the key of a deployment that never rotated; docs/adr/0083)"},
	{"LASTRO_OLD_DATA_KEYS", "old-data-keys", "", "id:base64 data keys, comma-separated, kept after a rotation to open what they sealed until lastro rotate data-key says they can be retired"},
	{"LASTRO_OLD_KMS_KEY_IDS", "old-kms-key-ids", "", "comma-separated KMS key ARNs kept after a rotation to open personal data they wrapped"},
	{"LASTRO_AGENDA_HOUR", "agenda-hour", "8", "local hour (0-23, in each tenant's time zone) from which serve runs the day's agenda"},
	{"LASTRO_SCHEDULER", "scheduler", "on", "on: serve runs each tenant's agenda once a day; off: only POST /v1/agenda/run and lastro worker do"},
	{"LASTRO_PSP_SANDBOX", "psp-sandbox", "auto", "auto: serve mounts the sandbox Pix PSP under /psp-sandbox (the PSP of tenants that configured none) only on the embedded store; on: the same, refused with an endpoint; off: never; force: also with an endpoint (never in production)"},
	{"LASTRO_STREAM", "stream", "auto", "on: serve also runs the stream consumer (events.jsonl in the data directory, counters, archive); off: run lastro stream; auto: on with the embedded store, off beside LASTRO_DYNAMODB_ENDPOINT"},
	{"LASTRO_STORE_CACHE_MB", "store-cache-mb", "1024", "embedded store's block cache in MiB (8-1048576); it fills only as data is read"},
	{"LASTRO_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated CIDRs of the proxies in front whose X-Forwarded-For names the client (failure limits); empty: the peer's address"},
	{"LASTRO_EGRESS_ALLOW", "egress-allow", "", "comma-separated CIDRs and/or loopback that tenants' webhooks and PSPs may reach besides public addresses (development); loopback also allows plain http to it; empty: https to public addresses only"},
	{"LASTRO_STORE_ADDR", "store-addr", "", "also serve the embedded store on this address for tools; NO AUTHENTICATION: anyone who reaches it can change balances"},
	{"LASTRO_PSP_WEBHOOK_TLS_ADDR", "psp-webhook-tls-addr", "", "also listen here, over mutual TLS, for PSPs' Pix webhooks (POST /v1/webhooks/{tenantId}/pix), each authenticated by its client certificate against the tenant's PUT /v1/tenant/psp/webhook-tls; empty: no such listener"},
	{"LASTRO_PSP_WEBHOOK_TLS_CERT", "psp-webhook-tls-cert", "", "PEM file of the mutual-TLS webhook listener's server certificate (chain first)"},
	{"LASTRO_PSP_WEBHOOK_TLS_KEY", "psp-webhook-tls-key", "", "PEM file of that certificate's private key"},
	{"LASTRO_PIX_RECONCILE_EVERY", "pix-reconcile-every", "10m", "how often serve reads back, at their PSPs, the open Pix charges whose check is due and applies what was paid (a lost webhook heals); off: never"},
}

// minAdminToken is the shortest admin token serve accepts: 32 characters
// of a random token are well over 128 bits.
const minAdminToken = 32

// newFlagSet returns the flag set of subcommand name; -h prints usage
// (synopsis, then every flag) to out and Parse returns flag.ErrHelp.
func newFlagSet(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: lastro %s %s\n\nflags:\n", name, synopsis)
		shown := flag.NewFlagSet(name, flag.ContinueOnError)
		shown.SetOutput(out)
		hidden := 0
		fs.VisitAll(func(f *flag.Flag) {
			if name != "serve" && serveOnly(f) {
				hidden++ // accepted everywhere (one environment for every command), listed by serve
				return
			}
			shown.Var(f.Value, f.Name, f.Usage)
		})
		shown.PrintDefaults()
		if hidden > 0 {
			fmt.Fprintf(out, "\n(the API server's %d own settings: lastro serve -h)\n", hidden)
		}
	}
	return fs
}

// serveOnly reports a setting flag (one envString added, its usage
// naming its variable) that only lastro serve reads: its listener,
// limits, scheduler, sandbox and stream. Every command accepts it (they
// share one environment), but only serve's -h lists it; a command's own
// flag of the same name (ddb serve -addr) is not one.
func serveOnly(f *flag.Flag) bool {
	env := ""
	for _, v := range limitVars {
		if v.flag == f.Name {
			env = v.env
		}
	}
	switch f.Name {
	case "addr", "admin-token", "agenda-hour", "scheduler", "psp-sandbox", "stream", "trusted-proxies", "store-addr":
		for _, v := range configVars {
			if v.flag == f.Name {
				env = v.env
			}
		}
	}
	return env != "" && strings.HasSuffix(f.Usage, "("+env+")")
}

// loadConfig adds the engine's flags to fs, parses args and checks the
// values, so a bad setting fails before anything starts.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	vals := map[string]*string{}
	for _, v := range configVars {
		vals[v.env] = envString(fs, getenv, v.env, v.flag, v.def, v.help)
	}
	limits := addLimitFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	lim, err := limits()
	if err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q (lastro %s -h lists the flags)", fs.Arg(0), fs.Name())
	}
	shards, err := strconv.Atoi(*vals["LASTRO_SHARDS"])
	if err != nil || shards < 1 || shards > 100 {
		return config{}, fmt.Errorf("LASTRO_SHARDS must be 1-100, got %q", *vals["LASTRO_SHARDS"])
	}
	if tok := *vals["LASTRO_ADMIN_TOKEN"]; tok != "" && len(tok) < minAdminToken {
		// The admin token creates tenants and sees their keys: a short one
		// is guessable. Its value is never echoed.
		return config{}, fmt.Errorf("LASTRO_ADMIN_TOKEN is %d characters: use at least %d (or leave it unset to generate one)", len(tok), minAdminToken)
	}
	if now := *vals["LASTRO_NOW"]; now != "" {
		if _, err := time.Parse(time.RFC3339, now); err != nil {
			return config{}, fmt.Errorf("LASTRO_NOW %q is not an RFC 3339 instant (for example 2026-09-24T12:00:00Z)", now)
		}
	}
	hour, err := strconv.Atoi(*vals["LASTRO_AGENDA_HOUR"])
	if err != nil || hour < 0 || hour > 23 {
		return config{}, fmt.Errorf("LASTRO_AGENDA_HOUR must be an hour 0-23, got %q", *vals["LASTRO_AGENDA_HOUR"])
	}
	sched := *vals["LASTRO_SCHEDULER"]
	if sched != "on" && sched != "off" {
		return config{}, fmt.Errorf("LASTRO_SCHEDULER must be on or off, got %q", sched)
	}
	sandbox, forced, err := sandboxMode(*vals["LASTRO_PSP_SANDBOX"], *vals["LASTRO_DYNAMODB_ENDPOINT"])
	if err != nil {
		return config{}, err
	}
	streamOn := *vals["LASTRO_STREAM"]
	switch streamOn {
	case "on", "off":
	case "auto":
		// With the embedded store nothing else reads its stream: serve
		// does, or the portfolio's counters and the events would wait for
		// a lastro stream nobody runs (and the stream keeps 24 hours).
		// Beside a real table the consumer is a deployment of its own.
		streamOn = "on"
		if *vals["LASTRO_DYNAMODB_ENDPOINT"] != "" {
			streamOn = "off"
		}
	default:
		return config{}, fmt.Errorf("LASTRO_STREAM must be on, off or auto, got %q", streamOn)
	}
	proxies, err := web.ParsePrefixes(*vals["LASTRO_TRUSTED_PROXIES"])
	if err != nil {
		return config{}, fmt.Errorf("LASTRO_TRUSTED_PROXIES: %w", err)
	}
	cache, err := parseStoreCache(*vals["LASTRO_STORE_CACHE_MB"])
	if err != nil {
		return config{}, err
	}
	egressPolicy, err := egress.Parse(*vals["LASTRO_EGRESS_ALLOW"])
	if err != nil {
		return config{}, fmt.Errorf("LASTRO_EGRESS_ALLOW: %w", err)
	}
	tlsAddr, tlsCert, tlsKey := *vals["LASTRO_PSP_WEBHOOK_TLS_ADDR"], *vals["LASTRO_PSP_WEBHOOK_TLS_CERT"], *vals["LASTRO_PSP_WEBHOOK_TLS_KEY"]
	if (tlsAddr == "") != (tlsCert == "") || (tlsAddr == "") != (tlsKey == "") {
		return config{}, errors.New("LASTRO_PSP_WEBHOOK_TLS_ADDR, LASTRO_PSP_WEBHOOK_TLS_CERT and LASTRO_PSP_WEBHOOK_TLS_KEY go together: the listener needs its certificate and key")
	}
	var reconcileEvery time.Duration
	if v := *vals["LASTRO_PIX_RECONCILE_EVERY"]; v != "off" {
		if reconcileEvery, err = time.ParseDuration(v); err != nil || reconcileEvery < time.Second {
			return config{}, fmt.Errorf("LASTRO_PIX_RECONCILE_EVERY must be a duration of at least 1s, such as 10m, or off; got %q", v)
		}
	}
	return config{
		PixReconcileEvery: reconcileEvery,
		PSPWebhookTLSAddr: tlsAddr, PSPWebhookTLSCert: tlsCert, PSPWebhookTLSKey: tlsKey,
		PSPSandbox: sandbox, PSPSandboxForced: forced, StoreCache: cache, TrustedProxies: proxies,
		AgendaHour: hour, Scheduler: sched == "on", Stream: streamOn == "on",
		Endpoint: *vals["LASTRO_DYNAMODB_ENDPOINT"], Table: *vals["LASTRO_TABLE"], DataDir: *vals["LASTRO_DATA_DIR"],
		Addr: *vals["LASTRO_ADDR"], AdminToken: *vals["LASTRO_ADMIN_TOKEN"], Now: *vals["LASTRO_NOW"], Shards: shards,
		KMSKeyID: *vals["LASTRO_KMS_KEY_ID"], DataKey: *vals["LASTRO_DATA_KEY"], StoreAddr: *vals["LASTRO_STORE_ADDR"],
		DataKeyID: *vals["LASTRO_DATA_KEY_ID"], OldKeys: *vals["LASTRO_OLD_DATA_KEYS"], OldKMSKeys: *vals["LASTRO_OLD_KMS_KEY_IDS"],
		Limits: lim, Egress: egressPolicy,
	}, nil
}

func (c config) inMemory() bool { return c.DataDir == ":memory:" }

// sandboxMode resolves LASTRO_PSP_SANDBOX against the endpoint: the
// sandbox pays charges with no bank behind it, so it belongs with the
// embedded store (a demo, a test) and is never mounted beside a real
// DynamoDB unless forced (docs/adr/0054-sandbox-psp-is-a-demo-tool.md).
func sandboxMode(mode, endpoint string) (mounted, forced bool, err error) {
	switch mode {
	case "auto":
		return endpoint == "", false, nil
	case "on":
		if endpoint != "" {
			return false, false, fmt.Errorf("LASTRO_PSP_SANDBOX=on with LASTRO_DYNAMODB_ENDPOINT set: the sandbox PSP pays charges with no bank behind it; " +
				"leave it auto or off, or set force if this really is not production")
		}
		return true, false, nil
	case "off":
		return false, false, nil
	case "force":
		return true, endpoint != "", nil
	}
	return false, false, fmt.Errorf("LASTRO_PSP_SANDBOX must be auto, on, off or force, got %q", mode)
}

// parseStoreCache reads LASTRO_STORE_CACHE_MB (serve's and ddb serve's)
// and returns the cache in bytes.
func parseStoreCache(mb string) (int64, error) {
	n, err := strconv.Atoi(mb)
	if err != nil || n < 8 || n > 1<<20 {
		return 0, fmt.Errorf("LASTRO_STORE_CACHE_MB must be 8-1048576, got %q", mb)
	}
	return int64(n) << 20, nil
}
