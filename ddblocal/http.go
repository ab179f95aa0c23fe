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

	"lastro/ddblocal/internal/storage"
)

const (
	targetDynamoDB = "DynamoDB_20120810."
	targetStreams  = "DynamoDBStreams_20120810."
	maxBodyBytes   = 16 << 20
)

// handlerFunc serves one operation: it decodes body and returns the
// response value (marshalled as JSON) or an error.
type handlerFunc func(ctx context.Context, body []byte) (any, error)

func (s *Store) operations() map[string]handlerFunc {
	return map[string]handlerFunc{
		"CreateTable":               s.createTable,
		"DescribeTable":             s.describeTable,
		"ListTables":                s.listTables,
		"DeleteTable":               s.deleteTable,
		"UpdateTable":               s.updateTable,
		"GetItem":                   s.getItem,
		"PutItem":                   s.putItem,
		"UpdateItem":                s.updateItem,
		"DeleteItem":                s.deleteItem,
		"Query":                     s.query,
		"Scan":                      s.scan,
		"BatchGetItem":              s.batchGetItem,
		"BatchWriteItem":            s.batchWriteItem,
		"TransactWriteItems":        s.transactWriteItems,
		"TransactGetItems":          s.transactGetItems,
		"ExecuteStatement":          s.executeStatement,
		"BatchExecuteStatement":     s.batchExecuteStatement,
		"ExecuteTransaction":        s.executeTransaction,
		"DescribeEndpoints":         s.describeEndpoints,
		"UpdateTimeToLive":          s.updateTimeToLive,
		"DescribeTimeToLive":        s.describeTimeToLive,
		"TagResource":               s.tagResource,
		"UntagResource":             s.untagResource,
		"ListTagsOfResource":        s.listTagsOfResource,
		"DescribeLimits":            s.describeLimits,
		"DescribeContinuousBackups": s.describeContinuousBackups,
		"UpdateContinuousBackups":   s.updateContinuousBackups,
		"ListBackups":               s.listBackups,
		"CreateBackup":              s.createBackup,
		"DescribeBackup":            s.describeBackup,
		"DeleteBackup":              s.deleteBackup,
		"RestoreTableFromBackup":    s.restoreTableFromBackup,
		"ExportTableToPointInTime":  s.exportTableToPointInTime,
		"DescribeExport":            s.describeExport,
		"ListExports":               s.listExports,
	}
}

// Handler returns the HTTP handler serving the DynamoDB JSON 1.0 protocol.
// Credentials and request signatures are accepted without being checked.
func (s *Store) Handler() http.Handler {
	ops := s.operations()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "healthy: dynamodb."+s.opts.Region+".amazonaws.com ")
			return
		}
		if strings.HasPrefix(r.URL.Path, adminPrefix) {
			s.serveAdmin(w, r)
			return
		}
		target := r.Header.Get("X-Amz-Target")
		var h handlerFunc
		var dataOp string
		if op, ok := strings.CutPrefix(target, targetDynamoDB); ok {
			h, dataOp = ops[op], op
		} else if op, ok := strings.CutPrefix(target, targetStreams); ok {
			h = s.streamOperations()[op]
		}
		if r.Method != http.MethodPost || h == nil {
			writeError(w, &apiError{Type: "UnknownOperationException", Status: 400})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		if err != nil {
			writeError(w, serialization("cannot read request body"))
			return
		}
		if len(body) > maxBodyBytes {
			writeError(w, &apiError{Type: "RequestEntityTooLarge", Status: 413,
				Message: "Request must be smaller than 16777216 bytes for the " + strings.TrimPrefix(target, targetDynamoDB) + " operation"})
			return
		}
		if len(body) == 0 {
			body = []byte("{}")
		}
		if fe := s.injectDispatch(dataOp, body); fe != nil {
			writeError(w, fe)
			return
		}
		resp, err := s.serve(r.Context(), h, body)
		if rl, ok := resp.(releaser); ok {
			// Its items count against the store's budget until written.
			defer rl.release()
		}
		if err != nil {
			var ae *apiError
			switch {
			case errors.As(err, &ae):
			case errors.Is(err, storage.ErrDiskFull):
				// Logged once by the storage engine, not once per write.
				ae = &apiError{Type: "InternalServerError", Status: 500,
					Message: "Internal server error: the store's disk is full; writes resume when space is freed"}
			default:
				s.log.Error("internal error", "op", target, "err", err)
				ae = internal(err)
			}
			writeError(w, ae)
			return
		}
		out, err := encodeResponse(resp)
		if err != nil {
			s.log.Error("encode response", "op", target, "err", err)
			writeError(w, internal(err))
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// serve runs a handler, turning a panic into an InternalServerError so a
// bug in one request never takes the store down.
func (s *Store) serve(ctx context.Context, h handlerFunc, body []byte) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving request", "panic", p)
			resp, err = nil, internal(nil)
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

func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"__type": e.namespace() + e.Type}
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

// decode unmarshals a request body, answering malformed JSON with
// DynamoDB's SerializationException.
func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return serialization("Unexpected value type in payload for member " + te.Field)
		}
		return serialization("Malformed JSON in request body")
	}
	return nil
}

func (s *Store) describeEndpoints(ctx context.Context, body []byte) (any, error) {
	return map[string]any{"Endpoints": []map[string]any{{"Address": "dynamodb." + s.opts.Region + ".amazonaws.com", "CachePeriodInMinutes": 1440}}}, nil
}
