// Package idem implements the Idempotency-Key header for POST endpoints,
// with the record layout users know from AWS Lambda Powertools: one item
// per tenant and key holding a status (IN_PROGRESS, COMPLETED), a hash of
// the request, the stored response and an expiry (TTL). The key is claimed
// with one conditional write; a retry with the same key and body replays
// the first response, another body is 422, a duplicate still in progress
// is 409.
package idem

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/labstack/echo/v4"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/web"
)

// Header is the request header carrying the key.
const Header = "Idempotency-Key"

// ReplayedHeader marks a replayed response.
const ReplayedHeader = "Idempotent-Replayed"

const (
	statusInProgress = "IN_PROGRESS"
	statusCompleted  = "COMPLETED"
)

// Store keeps idempotency records.
type Store struct {
	kit   *kit.Kit
	clock clock.Clock
	// TTL is how long a completed response is replayed.
	TTL time.Duration
	// Lease is how long an IN_PROGRESS claim blocks duplicates before a
	// crashed request's key can be claimed again.
	Lease time.Duration
}

// New returns a store with a 24 h TTL and a 60 s lease.
func New(k *kit.Kit, c clock.Clock) *Store {
	return &Store{kit: k, clock: c, TTL: 24 * time.Hour, Lease: time.Minute}
}

type record struct {
	PK             string `dynamodbav:"PK"`
	SK             string `dynamodbav:"SK"`
	Type           string `dynamodbav:"type"`
	Status         string `dynamodbav:"status"`
	RequestHash    string `dynamodbav:"requestHash"`
	ResponseStatus int    `dynamodbav:"responseStatus,omitempty"`
	ResponseBody   string `dynamodbav:"responseBody,omitempty"`
	ExpiresAt      int64  `dynamodbav:"expiresAt"`
	LeaseUntil     int64  `dynamodbav:"leaseUntil"` // epoch milliseconds
}

func hashHex(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recorder keeps a copy of the response body.
type recorder struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	r.buf.Write(b)
	return r.ResponseWriter.Write(b)
}

// Middleware makes a tenant endpoint idempotent by key. Requests without
// the header pass through untouched.
func (s *Store) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			key := c.Request().Header.Get(Header)
			if key == "" {
				return next(c)
			}
			if len(key) > 128 {
				return errs.E(errs.Invalid, "invalid_idempotency_key", "Idempotency-Key must be 1-128 characters")
			}
			p, ok := web.PrincipalOf(c)
			if !ok || p.TenantID == "" {
				return errs.E(errs.Unauth, "unauthenticated", "missing or invalid API key")
			}
			body, err := io.ReadAll(c.Request().Body)
			if err != nil {
				return errs.E(errs.Invalid, "body_too_large", "request body too large")
			}
			c.Request().Body = io.NopCloser(bytes.NewReader(body))
			ctx, _ := kit.Operation(c.Request().Context(), "idempotency")
			tn := s.kit.Tenant(p.TenantID, nil)
			k := kit.Key{PK: keys.Idempotency(p.TenantID, hashHex([]byte(key))), SK: keys.IdemSK}
			reqHash := hashHex([]byte(c.Request().Method), []byte(c.Path()), []byte(c.Request().URL.Path), body)
			replay, err := s.claim(ctx, tn, k, reqHash)
			if err != nil {
				return err
			}
			if replay != nil {
				c.Response().Header().Set(ReplayedHeader, "true")
				return c.Blob(replay.ResponseStatus, echo.MIMEApplicationJSON, []byte(replay.ResponseBody))
			}
			rec := &recorder{ResponseWriter: c.Response().Writer, status: http.StatusOK}
			c.Response().Writer = rec
			herr := next(c)
			status := c.Response().Status
			if herr == nil && status >= 200 && status < 300 {
				return s.complete(context.WithoutCancel(ctx), tn, k, status, rec.buf.String())
			}
			// A failed request releases the key, so a corrected retry runs.
			if derr := tn.Delete(context.WithoutCancel(ctx), k, nil); derr != nil {
				return errors.Join(herr, derr)
			}
			return herr
		}
	}
}

// claim takes the key with one conditional write, or explains why not:
// a stored response to replay, a different request (422) or a duplicate
// still running (409).
func (s *Store) claim(ctx context.Context, tn *kit.Tenant, k kit.Key, reqHash string) (*record, error) {
	now := s.clock.Now()
	item, err := attributevalue.MarshalMap(record{PK: k.PK, SK: k.SK, Type: "IDEM", Status: statusInProgress, RequestHash: reqHash,
		ExpiresAt: now.Add(s.TTL).Unix(), LeaseUntil: now.Add(s.Lease).UnixMilli()})
	if err != nil {
		return nil, err
	}
	free := expression.AttributeNotExists(expression.Name("PK")).
		Or(expression.Name("expiresAt").LessThan(expression.Value(now.Unix()))).
		Or(expression.Name("status").Equal(expression.Value(statusInProgress)).And(expression.Name("leaseUntil").LessThan(expression.Value(now.UnixMilli()))))
	err = tn.Put(ctx, item, &free)
	if err == nil {
		return nil, nil
	}
	if !errors.Is(err, kit.ErrConditionFailed) {
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	got, err := tn.Get(ctx, k, true)
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	if got == nil {
		return nil, errs.E(errs.Conflict, "idempotency_in_progress", "a request with this Idempotency-Key is in progress; retry")
	}
	var rec record
	if err := attributevalue.UnmarshalMap(got, &rec); err != nil {
		return nil, fmt.Errorf("decode idempotency record: %w", err)
	}
	switch {
	case rec.RequestHash != reqHash:
		return nil, errs.E(errs.Rule, "idempotency_key_reused", "this Idempotency-Key was used with a different request")
	case rec.Status == statusInProgress:
		return nil, errs.E(errs.Conflict, "idempotency_in_progress", "a request with this Idempotency-Key is in progress; retry")
	}
	return &rec, nil
}

func (s *Store) complete(ctx context.Context, tn *kit.Tenant, k kit.Key, status int, body string) error {
	upd := expression.Set(expression.Name("status"), expression.Value(statusCompleted)).
		Set(expression.Name("responseStatus"), expression.Value(status)).
		Set(expression.Name("responseBody"), expression.Value(body))
	_, err := tn.Update(ctx, k, upd, nil, types.ReturnValueNone)
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}
