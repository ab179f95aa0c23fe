package ddblocal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

const (
	targetDynamoDB = "DynamoDB_20120810."
	targetStreams  = "DynamoDBStreams_20120810."
	maxBodyBytes   = 16 << 20
)

func (s *Store) operations() map[string]wire.HandlerFunc {
	return map[string]wire.HandlerFunc{
		"CreateTable":               s.ctl.CreateTable,
		"DescribeTable":             s.ctl.DescribeTable,
		"ListTables":                s.ctl.ListTables,
		"DeleteTable":               s.ctl.DeleteTable,
		"UpdateTable":               s.ctl.UpdateTable,
		"GetItem":                   s.data.GetItem,
		"PutItem":                   s.data.PutItem,
		"UpdateItem":                s.data.UpdateItem,
		"DeleteItem":                s.data.DeleteItem,
		"Query":                     s.data.Query,
		"Scan":                      s.data.Scan,
		"BatchGetItem":              s.data.BatchGetItem,
		"BatchWriteItem":            s.data.BatchWriteItem,
		"TransactWriteItems":        s.tx.TransactWriteItems,
		"TransactGetItems":          s.tx.TransactGetItems,
		"ExecuteStatement":          s.pq.ExecuteStatement,
		"BatchExecuteStatement":     s.pq.BatchExecuteStatement,
		"ExecuteTransaction":        s.pq.ExecuteTransaction,
		"DescribeEndpoints":         s.describeEndpoints,
		"UpdateTimeToLive":          s.eng.UpdateTimeToLive,
		"DescribeTimeToLive":        s.eng.DescribeTimeToLive,
		"TagResource":               s.ctl.TagResource,
		"UntagResource":             s.ctl.UntagResource,
		"ListTagsOfResource":        s.ctl.ListTagsOfResource,
		"DescribeLimits":            s.ctl.DescribeLimits,
		"DescribeContinuousBackups": s.bk.DescribeContinuousBackups,
		"UpdateContinuousBackups":   s.bk.UpdateContinuousBackups,
		"ListBackups":               s.bk.ListBackups,
		"CreateBackup":              s.bk.CreateBackup,
		"DescribeBackup":            s.bk.DescribeBackup,
		"DeleteBackup":              s.bk.DeleteBackup,
		"RestoreTableFromBackup":    s.bk.RestoreTableFromBackup,
		"RestoreTableToPointInTime": s.bk.RestoreTableToPointInTime,
		"ExportTableToPointInTime":  s.bk.ExportTableToPointInTime,
		"DescribeExport":            s.bk.DescribeExport,
		"ListExports":               s.bk.ListExports,
	}
}

// Handler returns the HTTP handler serving the DynamoDB JSON 1.0 protocol.
// Credentials and request signatures are accepted without being checked.
func (s *Store) Handler() http.Handler {
	ops := s.operations()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "healthy: dynamodb."+s.eng.Opts.Region+".amazonaws.com ")
			return
		}
		if strings.HasPrefix(r.URL.Path, engine.AdminPrefix) {
			s.eng.ServeAdmin(w, r)
			return
		}
		target := r.Header.Get("X-Amz-Target")
		var h wire.HandlerFunc
		var dataOp string
		if op, ok := strings.CutPrefix(target, targetDynamoDB); ok {
			h, dataOp = ops[op], op
		} else if op, ok := strings.CutPrefix(target, targetStreams); ok {
			h = s.str.StreamOperations()[op]
		}
		if r.Method != http.MethodPost || h == nil {
			writeError(w, &wire.APIError{Type: "UnknownOperationException", Status: 400})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		if err != nil {
			writeError(w, wire.Serialization("cannot read request body"))
			return
		}
		if len(body) > maxBodyBytes {
			writeError(w, &wire.APIError{Type: "RequestEntityTooLarge", Status: 413,
				Message: "Request must be smaller than 16777216 bytes for the " + strings.TrimPrefix(target, targetDynamoDB) + " operation"})
			return
		}
		if len(body) == 0 {
			body = []byte("{}")
		}
		if fe := s.eng.InjectDispatch(dataOp, body); fe != nil {
			writeError(w, fe)
			return
		}
		resp, err := s.serve(r.Context(), h, body)
		if rl, ok := resp.(engine.Releaser); ok {
			// Its items count against the store's budget until written.
			defer rl.Release()
		}
		if err != nil {
			var ae *wire.APIError
			switch {
			case errors.As(err, &ae):
			case errors.Is(err, storage.ErrDiskFull):
				// Logged once by the storage engine, not once per write.
				ae = &wire.APIError{Type: "InternalServerError", Status: 500,
					Message: "Internal server error: the store's disk is full; writes resume when space is freed"}
			default:
				s.eng.Log.Error("internal error", "op", target, "err", err)
				ae = wire.Internal(err)
			}
			writeError(w, ae)
			return
		}
		out, err := encodeResponse(resp)
		if err != nil {
			s.eng.Log.Error("encode response", "op", target, "err", err)
			writeError(w, wire.Internal(err))
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// serve runs a handler, turning a panic into an InternalServerError so a
// bug in one request never takes the store down.
func (s *Store) serve(ctx context.Context, h wire.HandlerFunc, body []byte) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.eng.Log.Error("panic serving request", "panic", p)
			resp, err = nil, wire.Internal(nil)
		}
	}()
	return h(ctx, body)
}

func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("x-amzn-RequestId", requestID())
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func writeError(w http.ResponseWriter, e *wire.APIError) {
	body := map[string]any{"__type": e.Namespace() + e.Type}
	switch {
	case e.Type == "TransactionCanceledException":
		body["Message"] = e.Message
		body["CancellationReasons"] = e.Reasons
	case e.Message != "":
		body["message"] = e.Message
	}
	if e.Item != nil {
		body["Item"] = e.Item
	}
	out, _ := json.Marshal(body)
	status := e.Status
	if status == 0 {
		status = 400
	}
	writeJSON(w, status, out)
}

// encodeResponse renders an operation's answer. An answer that encodes
// itself (the pages and items, whose JSON is appended directly) is not
// passed through json.Marshal, which would validate and copy it again.
func encodeResponse(resp any) ([]byte, error) {
	if m, ok := resp.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(resp)
}

func (s *Store) describeEndpoints(ctx context.Context, body []byte) (any, error) {
	return map[string]any{"Endpoints": []map[string]any{{"Address": "dynamodb." + s.eng.Opts.Region + ".amazonaws.com", "CachePeriodInMinutes": 1440}}}, nil
}
