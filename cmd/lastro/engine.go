package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/labstack/echo/v4"

	"lastro/charges"
	"lastro/collections/clock"
	"lastro/collections/idem"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/collections/web"
	"lastro/contract"
	"lastro/ddblocal"
	"lastro/debtor"
	"lastro/policy"
	"lastro/settlement"
	"lastro/tenant"
)

// engine is the running Lastro engine: store client, services and HTTP API.
type engine struct {
	cfg        config
	log        *slog.Logger
	clock      clock.Clock
	store      *ddblocal.Store // the embedded store, when no endpoint is set
	storeURL   string          // its endpoint (DynamoDB and DynamoDB Streams APIs)
	stopStore  context.CancelFunc
	storeDone  chan error
	db         *dynamodb.Client
	kit        *kit.Kit
	web        *web.Server
	tenants    *tenant.Service
	idem       *idem.Store
	policies   *policy.Service
	debtors    *debtor.Service
	contracts  *contract.Service
	charges    *charges.Service
	settlement *settlement.Service
	sealer     pii.Sealer
	adminToken string
}

// newEngine wires the engine. With no endpoint it starts the embedded
// store on a loopback port and talks to it through the AWS SDK over HTTP,
// exactly as it would to DynamoDB.
func newEngine(ctx context.Context, cfg config, log *slog.Logger) (e *engine, err error) {
	e = &engine{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	var frozen bool
	if e.clock, frozen, err = clock.FromEnv(cfg.Now); err != nil {
		return nil, err
	}
	if frozen {
		log.Warn("CLOCK FROZEN by LASTRO_NOW: every date and deadline uses this instant", "now", cfg.Now)
	}
	dir := ""
	if !cfg.inMemory() {
		dir = cfg.DataDir
	}
	if cfg.Endpoint == "" {
		endpoint, err := e.startEmbedded(dir)
		if err != nil {
			return nil, err
		}
		// Anonymous credentials: the embedded store does not check
		// signatures, so the SDK skips SigV4 signing (a measurable share of
		// each request's CPU) and nothing else changes on the wire.
		e.db = dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}},
			func(o *dynamodb.Options) {
				o.BaseEndpoint = aws.String(endpoint)
				// Keep a connection per concurrent request to the embedded
				// store: the SDK's default keeps 10 idle per host, so under
				// load most calls paid for a new loopback connection.
				o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
					tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
				})
			})
	} else {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		e.db = dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.Endpoint) })
	}
	created, err := table.Ensure(ctx, e.db, cfg.Table)
	if err != nil {
		return nil, err
	}
	if created {
		log.Info("table created", "table", cfg.Table)
	}
	key, keyCreated, err := secret.LoadKey(cfg.DataKey, dir)
	if err != nil {
		return nil, err
	}
	if keyCreated && dir != "" {
		log.Info("data key generated in the data directory", "file", "data.key")
	}
	box, err := secret.New(key)
	if err != nil {
		return nil, err
	}
	if e.adminToken, err = adminToken(cfg.AdminToken, dir, log); err != nil {
		return nil, err
	}
	e.kit = kit.New(e.db, cfg.Table)
	e.tenants = tenant.NewService(e.kit, box, e.clock, cfg.Shards)
	e.idem = idem.New(e.kit, e.clock)
	if e.sealer, err = newSealer(ctx, cfg, key); err != nil {
		return nil, err
	}
	log.Info("personal data encryption", "keyring", e.sealer.Keyring())
	e.policies = policy.NewService(e.kit, e.tenants, e.clock)
	e.debtors = debtor.NewService(debtor.Deps{Kit: e.kit, Tenants: e.tenants, Sealer: e.sealer, Clock: e.clock})
	e.contracts = contract.NewService(contract.Deps{Kit: e.kit, Tenants: e.tenants, Policies: e.policies, Clock: e.clock, Idem: e.idem})
	e.charges = charges.NewService(charges.Deps{Kit: e.kit, Tenants: e.tenants, Policies: e.policies, Clock: e.clock, Idem: e.idem})
	e.settlement = settlement.NewService(settlement.Deps{Kit: e.kit, Tenants: e.tenants, Policies: e.policies, Clock: e.clock})
	e.web = web.New(web.Options{Logger: log, Title: "Lastro collections engine"})
	e.web.Echo.Use(e.tenants.Authenticator(e.adminToken))
	e.routes()
	return e, nil
}

func (e *engine) startEmbedded(dir string) (string, error) {
	opts := ddblocal.Options{Logger: e.log}
	where := ":memory:"
	if dir != "" {
		opts.Dir = filepath.Join(dir, "ddb")
		where = opts.Dir
	}
	st, err := ddblocal.Open(opts)
	if err != nil {
		return "", err
	}
	e.store = st
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("embedded store listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopStore = cancel
	e.storeDone = make(chan error, 1)
	go func() { e.storeDone <- st.Serve(ctx, ln) }()
	endpoint := "http://" + ln.Addr().String()
	e.storeURL = endpoint
	e.log.Info("no DynamoDB endpoint configured: using the embedded store", "data", where, "endpoint", endpoint)
	return endpoint, nil
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
			return strings.TrimSpace(string(raw)), nil
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

func (e *engine) routes() {
	e.web.Handle(web.Doc{Method: http.MethodGet, Path: "/healthz", Summary: "Liveness", Public: true}, func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.web.Handle(web.Doc{Method: http.MethodGet, Path: "/readyz", Summary: "Readiness: the store answers", Public: true}, e.ready)
	e.tenants.Routes(e.web)
	e.tenants.HolidayRoutes(e.web)
	e.policies.Routes(e.web)
	e.debtors.Routes(e.web)
	e.contracts.Routes(e.web)
	e.charges.Routes(e.web)
	e.settlement.Routes(e.web)
}

// newSealer encrypts personal data with KMS when LASTRO_KMS_KEY_ID is set,
// else with a raw AES keyring derived from the data key (ADR 0006).
func newSealer(ctx context.Context, cfg config, dataKey []byte) (pii.Sealer, error) {
	if cfg.KMSKeyID == "" {
		return pii.NewLocal(ctx, dataKey)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration for KMS: %w", err)
	}
	return pii.NewKMS(ctx, cfg.KMSKeyID, kms.NewFromConfig(awsCfg))
}

func (e *engine) ready(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if _, err := e.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(e.cfg.Table)}); err != nil {
		e.log.Warn("not ready", "error", err.Error())
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "store unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// Handler is the engine's HTTP API.
func (e *engine) Handler() http.Handler { return e.web.Echo }

// Close stops the embedded store, if any.
func (e *engine) Close() error {
	var err error
	if e.stopStore != nil {
		e.stopStore()
		if serr := <-e.storeDone; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
	}
	if e.store != nil {
		err = errors.Join(err, e.store.Close())
	}
	return err
}
