package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"lastro/agenda"
	"lastro/collections/clock"
	"lastro/collections/httpserve"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/contactlimit"
	"lastro/ddblocal"
	"lastro/engine"
)

// app is the engine as the binary runs it: the wired engine plus what it
// owns — the configuration, the SDK client and, with no endpoint, the
// embedded store.
type app struct {
	*engine.Engine
	cfg       config
	log       *slog.Logger
	db        *dynamodb.Client
	streams   *kit.Streams    // the table's stream, for the stream consumer
	store     *ddblocal.Store // the embedded store, when no endpoint is set
	storeURL  string          // its endpoint, only with LASTRO_STORE_ADDR
	admin     string          // the admin token, also the sandbox PSP's operator token
	stopStore context.CancelFunc
	storeDone chan error
}

// newApp builds the SDK client (for the embedded store unless an endpoint
// is configured), loads the secrets and wires the engine on them.
func newApp(ctx context.Context, cfg config, log *slog.Logger) (*app, error) {
	a := &app{cfg: cfg, log: log}
	if err := a.open(ctx); err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return a, nil
}

func (a *app) open(ctx context.Context) error {
	cfg, log := a.cfg, a.log
	clk, frozen, err := clock.FromEnv(cfg.Now)
	if err != nil {
		return err
	}
	if frozen {
		log.Warn("CLOCK FROZEN by LASTRO_NOW: every date and deadline uses this instant", "now", cfg.Now)
	}
	dir := ""
	if !cfg.inMemory() {
		dir = cfg.DataDir
	}
	if cfg.Endpoint == "" {
		h, err := a.startEmbedded(dir, clk)
		if err != nil {
			return err
		}
		a.db = kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(h))
		a.streams = kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, kit.InProcess(h)))
	} else {
		// Without the embedded store the data directory still holds the
		// data key and the admin token: it is checked the same way.
		if dir != "" {
			if err := usableDir(dir, a.log); err != nil {
				return err
			}
		}
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return fmt.Errorf("AWS configuration: %w", err)
		}
		a.db = dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.Endpoint) })
		a.streams = kit.NewStreams(kit.NewStreamsClient(awsCfg, streamsEndpoint(cfg.Endpoint)))
	}
	key, keyCreated, err := secret.LoadKey(cfg.DataKey, dir)
	if err != nil {
		return err
	}
	if keyCreated && dir != "" {
		log.Info("data key generated in the data directory", "file", "data.key")
	}
	admin, err := adminToken(cfg.AdminToken, dir, log)
	if err != nil {
		return err
	}
	a.admin = admin
	ring, err := dataKeyRing(cfg, key)
	if err != nil {
		return err
	}
	sealer, err := newSealer(ctx, cfg, ring)
	if err != nil {
		return err
	}
	log.Info("personal data encryption", "keyring", sealer.Keyring())
	// Contact messages and credit-bureau records go to JSON-lines files
	// (the local stand-ins for a messaging provider and a bureau): in the
	// data directory, or a temporary folder for an in-memory store.
	files := dir
	if files == "" {
		if files, err = os.MkdirTemp("", "lastro-"); err != nil {
			return err
		}
	}
	// A tenant that configured its messaging provider (PUT
	// /v1/tenant/messaging) gets its messages there, signed, dialled
	// through the egress policy; the others go to the local outbox.
	sender := &contactlimit.Router{Provider: &contactlimit.Webhook{Egress: cfg.Egress, Logger: log},
		Fallback: contactlimit.NewOutbox(filepath.Join(files, "outbox.jsonl"))}
	bureau := agenda.NewFileBureau(filepath.Join(files, "bureau.jsonl"))
	log.Info("contact outbox and bureau files", "dir", files)
	a.Engine, err = engine.New(ctx, engine.Deps{DB: a.db, Table: cfg.Table, Clock: clk, Logger: log, DataKey: key, DataKeyID: ring[0].ID, OldDataKeys: ring[1:],
		Sealer: sealer, AdminToken: admin, Shards: cfg.Shards, Sender: sender, Bureau: bureau,
		TrustedProxies: cfg.TrustedProxies, Egress: cfg.Egress, ExportsDir: a.exportsDir()})
	return err
}

// startEmbedded opens the embedded store and returns its handler, which
// the engine's SDK client reaches in process (ADR 0013): no port, so no
// one else on the machine can read or change the data. Only with
// LASTRO_STORE_ADDR does the store also listen, for tools.
func (a *app) startEmbedded(dir string, clk clock.Clock) (http.Handler, error) {
	// The store's TTL runs on the engine's clock: under a frozen LASTRO_NOW
	// a day's contact counter must not be swept as if that day were long
	// past (the limit would reset mid-day).
	opts := ddblocal.Options{Logger: a.log, Now: clk.Now, CacheSize: a.cfg.StoreCache}
	where := ":memory:"
	if dir != "" {
		if err := usableDir(dir, a.log); err != nil {
			return nil, err
		}
		opts.Dir = filepath.Join(dir, "ddb")
		// Exports land beside the store, not inside its Pebble folder.
		opts.ExportDir = filepath.Join(dir, "exports")
		where = opts.Dir
	}
	st, err := ddblocal.Open(opts)
	if err != nil {
		if dir != "" && errors.Is(err, syscall.EAGAIN) {
			// The store's lock file is held (F_SETLK: EAGAIN).
			return nil, fmt.Errorf("the data directory %s is in use by another lastro process (stop it, or set another LASTRO_DATA_DIR)", dir)
		}
		return nil, err
	}
	a.store = st
	h := st.Handler()
	if a.cfg.StoreAddr == "" {
		a.log.Info("no DynamoDB endpoint configured: using the embedded store in process", "data", where)
		return h, nil
	}
	ln, err := net.Listen("tcp", a.cfg.StoreAddr)
	if err != nil {
		return nil, fmt.Errorf("embedded store listen on %s: %w", a.cfg.StoreAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.stopStore = cancel
	a.storeDone = make(chan error, 1)
	go func() { a.storeDone <- httpserve.Run(ctx, ln, h, storeLimits(a.cfg.Limits), 10*time.Second, a.log) }()
	a.storeURL = "http://" + ln.Addr().String()
	a.log.Warn("embedded store listening WITHOUT AUTHENTICATION: anyone who reaches it can read and change every balance",
		"data", where, "endpoint", a.storeURL)
	return h, nil
}

// usableDir creates the data directory when missing, makes it private
// and checks that a file can be written in it, so an unusable directory
// is one clear error rather than the store's.
//
// The directory holds the data key and the admin token, so one that the
// group or others may read or enter (an operator's mkdir under umask
// 022 leaves 0755) is tightened to 0700 with a warning; one that is not
// ours, which we could only tighten as root and then take from its
// owner, is refused.
func usableDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the data directory %s cannot be created: %w", dir, unwrapPath(err))
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("the data directory %s cannot be read: %w", dir, unwrapPath(err))
	}
	if mode := info.Mode().Perm(); mode&0o077 != 0 {
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("the data directory %s is open to group or others (mode %04o) and owned by another user: make it yours with mode 0700, or set another LASTRO_DATA_DIR", dir, mode)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("the data directory %s is open to group or others (mode %04o) and cannot be made 0700: %w", dir, mode, unwrapPath(err))
		}
		log.Warn("the data directory was open to group or others: tightened to 0700 (it holds the data key and the admin token)",
			"data", dir, "was", fmt.Sprintf("%04o", mode))
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("the data directory %s is not writable: %w", dir, unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath drops the path an *os.PathError repeats (the message names
// the directory already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// adminToken returns the configured token, or one generated on first run
// and kept in the data directory (printed once so the operator can use it).
func adminToken(configured, dir string, log *slog.Logger) (string, error) {
	if configured != "" {
		return configured, nil
	}
	path := ""
	if dir != "" {
		path = filepath.Join(dir, "admin-token")
		if raw, err := os.ReadFile(path); err == nil {
			token := strings.TrimSpace(string(raw))
			if len(token) < minAdminToken {
				return "", fmt.Errorf("the admin token in %s is %d characters: use at least %d (delete the file to generate one)", path, len(token), minAdminToken)
			}
			return token, nil
		}
	}
	token := "adm_" + hex.EncodeToString(secret.Random(24))
	if path != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
			return "", err
		}
	}
	log.Warn("LASTRO_ADMIN_TOKEN not set: generated an admin token", "admin_token", token, "saved_in", path)
	return token, nil
}

// dataKeyRing is the data key under its id (LASTRO_DATA_KEY_ID), which
// seals, then the old keys kept to open (LASTRO_OLD_DATA_KEYS; ADR 0083).
func dataKeyRing(cfg config, key []byte) ([]secret.Key, error) {
	id := cfg.DataKeyID
	if id == "" {
		id = secret.LegacyKeyID
	}
	if !secret.ValidKeyID(id) {
		return nil, fmt.Errorf("LASTRO_DATA_KEY_ID must be 1-16 of a-z, 0-9 and -")
	}
	old, err := secret.ParseKeys(cfg.OldKeys)
	if err != nil {
		return nil, fmt.Errorf("LASTRO_OLD_DATA_KEYS: %w", err)
	}
	return append([]secret.Key{{ID: id, Bytes: key}}, old...), nil
}

// newSealer encrypts personal data with KMS when LASTRO_KMS_KEY_ID is set
// (opening also under LASTRO_OLD_KMS_KEY_IDS), else with raw AES keyrings
// derived from the data keys of ring, the first sealing (ADRs 0006, 0083).
func newSealer(ctx context.Context, cfg config, ring []secret.Key) (*pii.ESDK, error) {
	if cfg.KMSKeyID == "" {
		var keys []pii.LocalKey
		for _, k := range ring {
			keys = append(keys, pii.LocalKey{ID: k.ID, DataKey: k.Bytes})
		}
		return pii.NewLocalRing(ctx, keys[0], keys[1:]...)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration for KMS: %w", err)
	}
	var old []string
	for _, id := range strings.Split(cfg.OldKMSKeys, ",") {
		if id = strings.TrimSpace(id); id != "" {
			old = append(old, id)
		}
	}
	return pii.NewKMSRing(ctx, cfg.KMSKeyID, old, kms.NewFromConfig(awsCfg))
}

// Close stops the embedded store, if any. It is safe on an app that
// failed half-way through newApp.
func (a *app) Close() error {
	if a == nil {
		return nil
	}
	var err error
	if a.stopStore != nil {
		a.stopStore()
		if serr := <-a.storeDone; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
		a.stopStore = nil
	}
	if a.store != nil {
		err = errors.Join(err, a.store.Close())
	}
	return err
}

// streamsEndpoint is the DynamoDB Streams endpoint for a DynamoDB
// endpoint: the same for any DynamoDB-compatible server (the embedded
// store answers both APIs), the SDK's own resolution for AWS's regional
// endpoints, where Streams has a host of its own.
func streamsEndpoint(dynamo string) string {
	if strings.Contains(dynamo, ".amazonaws.com") {
		return ""
	}
	return dynamo
}

// exportsDir is where the embedded store writes exports (beside its
// Pebble folder); "" with an endpoint or in memory, where no folder of
// this machine holds them.
func (a *app) exportsDir() string {
	if a.cfg.Endpoint != "" || a.cfg.inMemory() {
		return ""
	}
	return filepath.Join(a.cfg.DataDir, "exports")
}
