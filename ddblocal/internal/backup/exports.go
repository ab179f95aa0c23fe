package backup

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// Table exports: ExportTableToPointInTime, DescribeExport and ListExports
// (ADR 0041).
//
// An export writes DynamoDB's S3 layout into a folder standing for the
// bucket: <root>/<bucket>/<prefix>/AWSDynamoDB/<exportId>/ holds _started,
// manifest-summary.json, manifest-files.json (one line per data file),
// their .md5 files and data/<name>.json.gz (gzipped DynamoDB JSON, one
// {"Item":...} line per item for a full export, one
// {"Metadata":...,"Keys":...,"NewImage":...,"OldImage":...} line per
// changed item for an incremental one). The root is Options.ExportDir,
// by default "exports" in the data directory, or a temporary folder that
// Close removes for an in-memory store (which keeps nothing).
//
// An export runs in the background, never in the request that starts it,
// and reads storage directly: it consumes no read capacity, as on AWS. It
// reads one durable view, which holds the items and the stream records
// of exactly the same commits. History comes from the table's own stream
// records (ADR 0042): a full export at an ExportTime in the past is the
// view with every change after ExportTime rolled back to its old image,
// and an incremental export is the changes committed in [from, to). Both
// are refused with InvalidExportTimeException when the records cannot
// cover the time asked for.

const (
	ExportInProgress = "IN_PROGRESS"
	ExportCompleted  = "COMPLETED"
	ExportFailed     = "FAILED"

	// exportItemsPerFile bounds a data file (DynamoDB writes at least one
	// file per partition; the split here is by count).
	exportItemsPerFile = 100_000
	// exportTokenLifetime is how long a ClientToken is remembered.
	exportTokenLifetime = 8 * time.Hour
	// Incremental windows: DynamoDB's bounds.
	minIncrementalWindow = 15 * time.Minute
	maxIncrementalWindow = 24 * time.Hour
)

// ExportDesc is an export's descriptor, persisted as JSON.
type ExportDesc struct {
	ARN            string    `json:"arn"`
	ID             string    `json:"id"`
	Status         string    `json:"status"`
	Table          string    `json:"table"`
	TableID        uint32    `json:"tableNum"`
	TableUUID      string    `json:"tableId"`
	Bucket         string    `json:"bucket"`
	Prefix         string    `json:"prefix,omitempty"`
	BucketOwner    string    `json:"bucketOwner,omitempty"`
	SSEAlgorithm   string    `json:"sse,omitempty"`
	SSEKey         string    `json:"sseKey,omitempty"`
	Format         string    `json:"format"`
	Type           string    `json:"type"`
	ViewType       string    `json:"viewType,omitempty"`
	ExportTime     time.Time `json:"exportTime,omitzero"`
	From           time.Time `json:"from,omitzero"`
	To             time.Time `json:"to,omitzero"`
	Start          time.Time `json:"start"`
	End            time.Time `json:"end,omitzero"`
	ClientToken    string    `json:"clientToken"`
	Request        string    `json:"request"` // hash of the request's meaning, for ClientToken reuse
	Items          int64     `json:"items"`
	Bytes          int64     `json:"bytes"`
	ManifestKey    string    `json:"manifestKey,omitempty"`
	FailureCode    string    `json:"failureCode,omitempty"`
	FailureMessage string    `json:"failureMessage,omitempty"`

	// Not persisted: how the request named its instant.
	atNow       bool // ExportTime (or ExportToTime) is the snapshot's instant, resolved by startExport
	pointInTime bool // a past ExportTime: the snapshot's later changes are rolled back
}

type incrementalSpec struct {
	ExportFromTime *float64 `json:"ExportFromTime"`
	ExportToTime   *float64 `json:"ExportToTime"`
	ExportViewType string   `json:"ExportViewType"`
}

type exportTableInput struct {
	TableArn                       *string          `json:"TableArn"`
	S3Bucket                       *string          `json:"S3Bucket"`
	S3Prefix                       *string          `json:"S3Prefix"`
	S3BucketOwner                  *string          `json:"S3BucketOwner"`
	S3SseAlgorithm                 string           `json:"S3SseAlgorithm"`
	S3SseKmsKeyId                  *string          `json:"S3SseKmsKeyId"`
	ExportFormat                   string           `json:"ExportFormat"`
	ExportType                     string           `json:"ExportType"`
	ExportTime                     *float64         `json:"ExportTime"`
	ClientToken                    *string          `json:"ClientToken"`
	IncrementalExportSpecification *incrementalSpec `json:"IncrementalExportSpecification"`
	FilterSpecification            json.RawMessage  `json:"FilterSpecification"`
}

type exportARNInput struct {
	ExportArn *string `json:"ExportArn"`
}

type listExportsInput struct {
	TableArn   *string `json:"TableArn"`
	MaxResults *int64  `json:"MaxResults"`
	NextToken  *string `json:"NextToken"`
}

var (
	bucketPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	clientTokenPattern = regexp.MustCompile(`^[^$]+$`)
)

func exportNotFound(arn string) *wire.APIError {
	return &wire.APIError{Type: "ExportNotFoundException", Message: "Export not found: " + arn, Status: 400}
}

func invalidExportTime(format string, args ...any) *wire.APIError {
	return &wire.APIError{Type: "InvalidExportTimeException", Message: fmt.Sprintf(format, args...), Status: 400}
}

// Epoch seconds outside years 1 to 9999 are clamped to them: converting
// a larger float to int64 is undefined and wraps to some other year.
const (
	minEpoch = -62135596800 // 0001-01-01T00:00:00Z
	maxEpoch = 253402300799 // 9999-12-31T23:59:59Z
)

// fromEpoch converts an epoch-seconds timestamp of the wire protocol.
func fromEpoch(v float64) time.Time {
	v = min(max(v, minEpoch), maxEpoch)
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(math.Round(frac*1000))*int64(time.Millisecond)).UTC()
}

// ExportTableToPointInTime starts a full or incremental export of a
// table with point-in-time recovery: the request is checked, resolved to
// the times it exports, matched against an earlier request with the same
// ClientToken, then handed to a background job.
func (s *Store) ExportTableToPointInTime(ctx context.Context, body []byte) (any, error) {
	var in exportTableInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkExportMembers(&in); err != nil {
		return nil, err
	}
	bucket, prefix, err := s.checkExportTarget(&in)
	if err != nil {
		return nil, err
	}
	arn := *in.TableArn
	t := s.Table(arn)
	if t == nil {
		return nil, tableNotFoundForBackups(arn)
	}
	d := t.Def.Load()
	if d.PITR == nil || !d.PITR.Enabled {
		return nil, &wire.APIError{Type: "PointInTimeRecoveryUnavailableException", Status: 400,
			Message: "Point in time recovery is not enabled for table '" + d.Name + "'"}
	}
	now := s.Now().UTC()
	e := &ExportDesc{Table: d.Name, TableID: d.ID, TableUUID: d.TableID, Bucket: bucket, Prefix: prefix,
		BucketOwner: optString(in.S3BucketOwner), SSEAlgorithm: cmp.Or(in.S3SseAlgorithm, "AES256"), SSEKey: optString(in.S3SseKmsKeyId),
		Format: "DYNAMODB_JSON", Type: cmp.Or(in.ExportType, "FULL_EXPORT"), Status: ExportInProgress, Start: now,
		ClientToken: optString(in.ClientToken)}
	if err := s.resolveExportTimes(e, d, &in, now); err != nil {
		return nil, err
	}
	e.Request = e.meaning()
	s.Exports.Starting.Lock()
	defer s.Exports.Starting.Unlock()
	if e.ClientToken != "" {
		if prev, err := s.exportByToken(e.ClientToken, now); err != nil || prev != nil {
			if err != nil {
				return nil, err
			}
			if prev.Request != e.Request {
				return nil, &wire.APIError{Type: "IdempotentParameterMismatchException", Status: 400,
					Message: "ClientToken " + e.ClientToken + " was used by another export request with different parameters"}
			}
			return map[string]any{"ExportDescription": s.exportDescription(prev)}, nil
		}
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	e.ID = fmt.Sprintf("%014d-%x", now.UnixMilli(), suffix)
	e.ARN = s.TableARN(d.Name) + "/export/" + e.ID
	e.ManifestKey = e.objectKey("manifest-files.json")
	return s.startExport(e)
}

// checkExportMembers checks the request's members against their
// constraints, all reported at once.
func checkExportMembers(in *exportTableInput) error {
	var c wire.Constraints
	c.NotNull("tableArn", in.TableArn == nil)
	if in.TableArn != nil {
		c.MinLen("tableArn", *in.TableArn, len(*in.TableArn), 1)
		c.MaxLen("tableArn", *in.TableArn, len(*in.TableArn), 1024)
	}
	c.NotNull("s3Bucket", in.S3Bucket == nil)
	if in.S3Bucket != nil {
		c.MaxLen("s3Bucket", *in.S3Bucket, len(*in.S3Bucket), 255)
	}
	if in.S3Prefix != nil {
		c.MaxLen("s3Prefix", *in.S3Prefix, len(*in.S3Prefix), 1024)
	}
	if in.ClientToken != nil && !clientTokenPattern.MatchString(*in.ClientToken) {
		c.Add("Value '%s' at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[^\\$]+$", *in.ClientToken)
	}
	if in.S3SseAlgorithm != "" {
		c.Enum("s3SseAlgorithm", in.S3SseAlgorithm, "AES256", "KMS")
	}
	if in.ExportFormat != "" {
		c.Enum("exportFormat", in.ExportFormat, "DYNAMODB_JSON", "ION")
	}
	if in.ExportType != "" {
		c.Enum("exportType", in.ExportType, "FULL_EXPORT", "INCREMENTAL_EXPORT")
	}
	if sp := in.IncrementalExportSpecification; sp != nil && sp.ExportViewType != "" {
		c.Enum("incrementalExportSpecification.exportViewType", sp.ExportViewType, "NEW_IMAGE", "NEW_AND_OLD_IMAGES")
	}
	if err := c.Err(); err != nil {
		return err
	}
	return nil
}

// checkExportTarget checks the table ARN and the S3 destination, and
// refuses what this store cannot export (ION, filters); it returns the
// bucket and the prefix trimmed of slashes.
func (s *Store) checkExportTarget(in *exportTableInput) (bucket, prefix string, err error) {
	arn := *in.TableArn
	// Another account's table is refused as unauthorized before its shape
	// is judged, as DynamoDB (and CreateBackup here) does; then only this
	// store's table ARNs, with a name and nothing after it, are valid.
	if wire.IsTableARN(arn) && engine.ARNAccount(arn) != "" {
		if err := s.ForeignARN("ExportTableToPointInTime", arn); err != nil {
			return "", "", err
		}
	}
	if name, ok := strings.CutPrefix(arn, s.TableARN("")); !ok || name == "" || strings.Contains(name, "/") {
		return "", "", wire.Validation("Invalid TableArn: %s", arn)
	}
	if in.ExportFormat == "ION" {
		return "", "", wire.Validation("ExportFormat ION is not supported by this store: use DYNAMODB_JSON")
	}
	if len(in.FilterSpecification) > 0 && string(in.FilterSpecification) != "null" {
		return "", "", wire.Validation("FilterSpecification is not supported by this store")
	}
	bucket, prefix = *in.S3Bucket, strings.Trim(optString(in.S3Prefix), "/")
	if !bucketPattern.MatchString(bucket) || strings.Contains(bucket, "..") {
		return "", "", wire.Validation("Invalid S3Bucket %q: a bucket name is 3 to 63 lowercase letters, digits, dots and hyphens", bucket)
	}
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return "", "", wire.Validation("Invalid S3Prefix %q: no '.', '..' or backslash segments", prefix)
		}
	}
	return bucket, prefix, nil
}

// resolveExportTimes sets what e exports: a full export's instant (now,
// or a point in time the stream records cover), an incremental export's
// window and view type.
func (s *Store) resolveExportTimes(e *ExportDesc, d *engine.TableDef, in *exportTableInput, now time.Time) error {
	sp := in.IncrementalExportSpecification
	switch e.Type {
	case "FULL_EXPORT":
		if sp != nil {
			return wire.Validation("IncrementalExportSpecification is only valid with ExportType INCREMENTAL_EXPORT")
		}
		e.ExportTime, e.atNow = now, true
		if in.ExportTime != nil {
			e.ExportTime = fromEpoch(*in.ExportTime)
		}
		if e.ExportTime.After(now) {
			return invalidExportTime("ExportTime %s is in the future", e.ExportTime.Format(time.RFC3339Nano))
		}
		// A time in the current millisecond (the records' precision) is
		// now: the export is of its own snapshot's instant.
		if e.ExportTime.UnixMilli() < now.UnixMilli() {
			if err := s.covers(d, e.ExportTime, now, true, false); err != nil {
				return err
			}
			e.atNow, e.pointInTime = false, true
		}
	case "INCREMENTAL_EXPORT":
		if in.ExportTime != nil {
			return wire.Validation("ExportTime is only valid with ExportType FULL_EXPORT: an incremental export takes IncrementalExportSpecification")
		}
		if sp == nil || sp.ExportFromTime == nil {
			return wire.Validation("IncrementalExportSpecification.ExportFromTime is required for ExportType INCREMENTAL_EXPORT")
		}
		e.ViewType = cmp.Or(sp.ExportViewType, "NEW_AND_OLD_IMAGES")
		e.From, e.To, e.atNow = fromEpoch(*sp.ExportFromTime), now, true
		if sp.ExportToTime != nil {
			e.To, e.atNow = fromEpoch(*sp.ExportToTime), false
		}
		switch w := e.To.Sub(e.From); {
		case w <= 0:
			return wire.Validation("ExportFromTime must be before ExportToTime")
		case w < minIncrementalWindow:
			return wire.Validation("The incremental export window must be at least 15 minutes (ExportFromTime to ExportToTime)")
		case w > maxIncrementalWindow:
			return wire.Validation("The incremental export window must be at most 24 hours (ExportFromTime to ExportToTime)")
		}
		if e.To.After(now) {
			return invalidExportTime("ExportToTime %s is in the future", e.To.Format(time.RFC3339Nano))
		}
		if err := s.covers(d, e.From, e.To, e.ViewType == "NEW_AND_OLD_IMAGES", true); err != nil {
			return err
		}
	}
	return nil
}

// optString dereferences an optional string member.
func optString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// meaning identifies what an export request asks for, for ClientToken
// reuse (the times are what the request resolved them to).
func (e *ExportDesc) meaning() string {
	return strings.Join([]string{e.Table, e.Bucket, e.Prefix, e.BucketOwner, e.SSEAlgorithm, e.SSEKey, e.Format, e.Type, e.ViewType,
		strconv.FormatInt(e.From.UnixMilli(), 10), strconv.FormatInt(e.To.UnixMilli(), 10)}, "\x00")
}

// objectKey is the S3 key of one of the export's objects.
func (e *ExportDesc) objectKey(name string) string {
	k := "AWSDynamoDB/" + e.ID + "/" + name
	if e.Prefix != "" {
		k = e.Prefix + "/" + k
	}
	return k
}

// covers checks that the table's stream records hold every change in
// [from, to): the stream was on, with the images needed, the whole time,
// and from is not before EarliestRestorableDateTime (PITR enabled since
// then, within the recovery window: the records of a table with PITR are
// kept that long, streams.go). needOld asks for old images (rolling a
// change back, or an export of old and new images), needNew for new ones.
// Callers have checked that PITR is enabled.
func (s *Store) covers(d *engine.TableDef, from, to time.Time, needOld, needNew bool) error {
	earliest := d.PITR.Earliest(s.Now())
	// Records before the floor were deleted: normally it trails the
	// recovery window, but a store that trimmed at 24 hours before
	// keeping the window has less history than PITR's age says.
	if floor := s.HistoryFloor(d.ID); floor.After(earliest) {
		earliest = floor
	}
	s.Streams.Mu.Lock()
	var stream *engine.StreamMeta
	for _, m := range s.Streams.Metas {
		if m.TableID == d.ID && !m.Created.After(from) && (m.Open() || !m.Closed.Before(to)) {
			stream = m
		}
	}
	s.Streams.Mu.Unlock()
	hint := "this store exports the past from its stream records: the table's stream must have been on (" +
		"NEW_AND_OLD_IMAGES) and point-in-time recovery enabled since then, within its recovery period"
	if stream == nil {
		return invalidExportTime("No stream of table %s covers %s to %s: %s", d.Name, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), hint)
	}
	if stream.Created.After(earliest) {
		earliest = stream.Created
	}
	if from.Before(earliest) {
		return invalidExportTime("%s is before the earliest time this store can export from (%s): %s",
			from.Format(time.RFC3339Nano), earliest.UTC().Format(time.RFC3339Nano), hint)
	}
	v := stream.ViewType
	if (needOld && v != "OLD_IMAGE" && v != "NEW_AND_OLD_IMAGES") || (needNew && v != "NEW_IMAGE" && v != "NEW_AND_OLD_IMAGES") {
		return invalidExportTime("The stream of table %s records %s, which cannot rebuild this export: %s", d.Name, v, hint)
	}
	return nil
}

// exportByToken finds an export started with token within the token's
// lifetime.
func (s *Store) exportByToken(token string, now time.Time) (*ExportDesc, error) {
	all, err := s.LoadExports()
	if err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.ClientToken == token && now.Sub(e.Start) < exportTokenLifetime {
			return e, nil
		}
	}
	return nil, nil
}

// startExport takes the export's snapshot, persists the descriptor and
// runs the export in the background; Close stops it (Open then marks it
// failed). It returns the response, rendered before the export starts:
// from then on its goroutine owns e.
func (s *Store) startExport(e *ExportDesc) (any, error) {
	s.Exports.Mu.Lock()
	defer s.Exports.Mu.Unlock()
	if s.Exports.Closed {
		return nil, &wire.APIError{Type: "InternalServerError", Message: "the store is closing", Status: 500}
	}
	// The snapshot is taken now, so the export holds every write
	// acknowledged before the call (and every commit stamped before its
	// instant, acknowledged or not yet: ADR 0059). An export of now is of
	// the snapshot's own instant, read under the commit lock.
	view, err := s.DB.SnapshotAt(func() {
		if e.atNow {
			if e.Type == "FULL_EXPORT" {
				e.ExportTime = s.snapshotInstant()
			} else {
				e.To = s.snapshotInstant()
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if err := s.SaveExport(e); err != nil {
		view.Release()
		return nil, err
	}
	resp := map[string]any{"ExportDescription": s.exportDescription(e)}
	ctx, cancel := context.WithCancel(context.Background())
	s.Bg.Done.Add(1)
	go func() {
		defer s.Bg.Done.Done()
		defer cancel()
		defer view.Release()
		go func() {
			select {
			case <-s.Bg.Stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := s.runExport(ctx, view, e)
		if ctx.Err() != nil && err != nil {
			return // closing: Open marks it failed
		}
		e.End = s.Now().UTC()
		e.Status = ExportCompleted
		if err != nil {
			e.Status, e.FailureCode, e.FailureMessage = ExportFailed, "ExportFailed", err.Error()
			s.Log.Error("table export failed", "export", e.ARN, "err", err)
		}
		if err := s.SaveExport(e); err != nil {
			s.Log.Error("save export", "export", e.ARN, "err", err)
		}
	}()
	return resp, nil
}

// instantWait bounds how long snapshotInstant waits for the clock to
// pass a millisecond: a real clock does within one, a manual or frozen
// one (Options.Now in tests, LASTRO_NOW) never does.
const instantWait = 5 * time.Millisecond

// snapshotInstant returns the instant of a snapshot being taken, called
// under the commit lock. Stream records are stamped in milliseconds
// under the same lock, so the commits in the snapshot are stamped at or
// before the clock's current millisecond m and later ones at or after it.
// It holds the lock until the clock reaches m+2 ms and answers m+1 ms:
// every commit in the snapshot is then strictly before the instant and
// every later one strictly after, so no record shares it, and a full
// export at it chained with an incremental export from it (inclusive)
// gives the full export at the next instant (ADR 0059). A clock that does
// not move within instantWait cannot separate commits by time at all:
// the instant is its reading and the snapshot is what it holds.
func (s *Store) snapshotInstant() time.Time {
	t := s.Now().UTC()
	m := t.Truncate(time.Millisecond)
	deadline := time.Now().Add(instantWait)
	for s.Now().Before(m.Add(2 * time.Millisecond)) {
		if time.Now().After(deadline) {
			return t
		}
		time.Sleep(50 * time.Microsecond)
	}
	return m.Add(time.Millisecond)
}

func (s *Store) SaveExport(e *ExportDesc) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.DB.Set(storage.ExportKey(e.ARN), raw)
}

// LoadExports reads every export descriptor.
func (s *Store) LoadExports() ([]*ExportDesc, error) {
	lo, hi := storage.ExportSpan()
	return descriptors[ExportDesc](s, lo, hi, "export")
}

// descriptors reads the JSON descriptors (of exports, backups) stored
// between lo and hi, in key order.
func descriptors[T any](s *Store, lo, hi []byte, what string) ([]*T, error) {
	iter, err := s.DB.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var out []*T
	for iter.First(); iter.Valid(); iter.Next() {
		var d T
		if err := json.Unmarshal(iter.Value(), &d); err != nil {
			return nil, fmt.Errorf("ddblocal: %s descriptor %q: %w", what, iter.Key(), err)
		}
		out = append(out, &d)
	}
	return out, iter.Error()
}

// RecoverExports marks the exports a crash or a Close interrupted as
// failed: their files may be partial.
func (s *Store) RecoverExports() error {
	all, err := s.LoadExports()
	if err != nil {
		return err
	}
	for _, e := range all {
		if e.Status == ExportInProgress {
			e.Status, e.End = ExportFailed, s.Now().UTC()
			e.FailureCode, e.FailureMessage = "ExportInterrupted", "the store stopped before the export completed"
			if err := s.SaveExport(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// exportRoot resolves the folder holding the buckets.
func (s *Store) exportRoot() (string, error) {
	s.Exports.Mu.Lock()
	defer s.Exports.Mu.Unlock()
	if s.Exports.Root != "" {
		return s.Exports.Root, nil
	}
	switch {
	case s.Opts.ExportDir != "":
		s.Exports.Root = s.Opts.ExportDir
	case s.Opts.Dir != "":
		s.Exports.Root = filepath.Join(s.Opts.Dir, "exports")
	default:
		dir, err := os.MkdirTemp("", "ddblocal-exports-")
		if err != nil {
			return "", err
		}
		s.Exports.Root, s.Exports.Temp = dir, true
	}
	return s.Exports.Root, nil
}

// ExportDir returns the folder of an export's objects (the one holding
// manifest-summary.json), or "" when the ARN names no export.
func (s *Store) ExportDir(exportARN string) (string, error) {
	raw, err := s.DB.Get(storage.ExportKey(exportARN))
	if errors.Is(err, storage.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var e ExportDesc
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", err
	}
	root, err := s.exportRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, e.Bucket, filepath.FromSlash(e.objectKey(""))), nil
}

// CloseExports stops new exports; Close calls it before waiting for the
// background work, and removes a temporary root afterwards.
func (s *Store) CloseExports() {
	s.Exports.Mu.Lock()
	s.Exports.Closed = true
	s.Exports.Mu.Unlock()
}

func (s *Store) RemoveTempExports() {
	s.Exports.Mu.Lock()
	defer s.Exports.Mu.Unlock()
	if s.Exports.Temp {
		os.RemoveAll(s.Exports.Root)
	}
}

// exportWriter writes the data files of one export.
type exportWriter struct {
	dir, keyDir string // folder of data files; their S3 key prefix
	files       []map[string]any
	f           *os.File
	gz          *gzip.Writer
	sum         hashWriter
	n           int64
}

type hashWriter struct {
	f   *os.File
	md5 interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
}

func (h *hashWriter) Write(p []byte) (int, error) {
	h.md5.Write(p)
	return h.f.Write(p)
}

var fileNames = base32.StdEncoding.WithPadding(base32.NoPadding)

func (w *exportWriter) open() error {
	var b [16]byte
	rand.Read(b[:])
	name := strings.ToLower(fileNames.EncodeToString(b[:])) + ".json.gz"
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w.f, w.n = f, 0
	w.sum = hashWriter{f: f, md5: md5.New()}
	w.gz = gzip.NewWriter(&w.sum)
	w.files = append(w.files, map[string]any{"dataFileS3Key": w.keyDir + name})
	return nil
}

// write appends one line (without its newline).
func (w *exportWriter) write(line []byte) error {
	if w.f == nil || w.n >= exportItemsPerFile {
		if err := w.close(); err != nil {
			return err
		}
		if err := w.open(); err != nil {
			return err
		}
	}
	w.n++
	_, err := w.gz.Write(append(line, '\n'))
	return err
}

// close finishes the current file, synced.
func (w *exportWriter) close() error {
	if w.f == nil {
		return nil
	}
	err := errors.Join(w.gz.Close(), w.f.Sync(), w.f.Close())
	sum := w.sum.md5.Sum(nil)
	last := w.files[len(w.files)-1]
	last["itemCount"] = w.n
	last["md5Checksum"] = base64.StdEncoding.EncodeToString(sum)
	last["etag"] = hex.EncodeToString(sum)
	w.f = nil
	return err
}

// runExport writes the export's objects from view.
func (s *Store) runExport(ctx context.Context, view *storage.View, e *ExportDesc) error {
	root, err := s.exportRoot()
	if err != nil {
		return err
	}
	base := filepath.Join(root, e.Bucket, filepath.FromSlash(e.objectKey("")))
	w := &exportWriter{dir: filepath.Join(base, "data"), keyDir: e.objectKey("data/")}
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(base, "_started"), nil); err != nil {
		return err
	}
	t := s.Table(e.Table)
	if t == nil || t.Def.Load().ID != e.TableID {
		return fmt.Errorf("table %s was deleted during the export", e.Table)
	}
	d := t.Def.Load()
	if e.Type == "FULL_EXPORT" {
		err = s.exportFull(ctx, view, d, e, w)
	} else {
		err = s.exportIncremental(ctx, view, d, e, w)
	}
	if err = errors.Join(err, w.close()); err != nil {
		return err
	}
	if len(w.files) == 0 {
		// An empty table still has one (empty) data file, as on AWS.
		if err := errors.Join(w.open(), w.close()); err != nil {
			return err
		}
	}
	var files []byte
	for _, f := range w.files {
		line, err := json.Marshal(f)
		if err != nil {
			return err
		}
		files = append(append(files, line...), '\n')
	}
	e.End = s.Now().UTC()
	summary := map[string]any{
		"version": "2020-06-30", "exportArn": e.ARN, "startTime": e.Start.Format(time.RFC3339Nano), "endTime": e.End.Format(time.RFC3339Nano),
		"tableArn": s.TableARN(e.Table), "tableId": e.TableUUID, "s3Bucket": e.Bucket, "s3Prefix": nilIfEmpty(e.Prefix),
		"s3SseAlgorithm": e.SSEAlgorithm, "s3SseKmsKeyId": nilIfEmpty(e.SSEKey), "manifestFilesS3Key": e.ManifestKey,
		"billedSizeBytes": e.Bytes, "itemCount": e.Items, "outputFormat": e.Format, "exportType": e.Type,
	}
	if e.Type == "FULL_EXPORT" {
		summary["exportTime"] = e.ExportTime.Format(time.RFC3339Nano)
	} else {
		summary["version"] = "2023-08-01"
		summary["exportFromTime"] = e.From.Format(time.RFC3339Nano)
		summary["exportToTime"] = e.To.Format(time.RFC3339Nano)
		summary["exportViewType"] = e.ViewType
	}
	raw, err := json.Marshal(summary)
	if err != nil {
		return err
	}
	// The summary goes last: its presence says the export is whole.
	for _, f := range []struct {
		name string
		data []byte
	}{{"manifest-files.json", files}, {"manifest-summary.json", raw}} {
		sum := md5.Sum(f.data)
		if err := errors.Join(writeFile(filepath.Join(base, f.name), f.data),
			writeFile(filepath.Join(base, strings.TrimSuffix(f.name, ".json")+".md5"), []byte(base64.StdEncoding.EncodeToString(sum[:])))); err != nil {
			return err
		}
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

// change history read from stream records.
type keyHistory struct {
	keys     av.Item
	old, new av.Item // state before the first and after the last record
	at       uint64  // last write, Unix ms
}

// recordImages is the part of a stored stream record an export reads.
type recordImages struct {
	Dynamodb struct {
		Keys     av.WireItem `json:"Keys"`
		NewImage av.WireItem `json:"NewImage"`
		OldImage av.WireItem `json:"OldImage"`
	} `json:"dynamodb"`
}

func imageFromWire(w av.WireItem) (av.Item, error) {
	if w == nil {
		return nil, nil
	}
	return av.ItemFromWire(w)
}

// history reads the table's stream records committed in the Unix-ms range
// [from, to) of view, folded per item in first-change order.
func (s *Store) history(ctx context.Context, view *storage.View, d *engine.TableDef, from, to int64) ([]string, map[string]*keyHistory, error) {
	lo, hi := storage.RecordSpan(d.ID)
	iter, err := view.NewIter(lo, hi)
	if err != nil {
		return nil, nil, err
	}
	defer iter.Close()
	var order []string
	byKey := map[string]*keyHistory{}
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		v := iter.Value()
		at := int64(binary.BigEndian.Uint64(v[:8]))
		if at < from || at >= to {
			continue
		}
		var r recordImages
		if err := json.Unmarshal(v[8:], &r); err != nil {
			return nil, nil, fmt.Errorf("stream record %d: %w", storage.RecordSeq(iter.Key()), err)
		}
		keys, err := av.ItemFromWire(r.Dynamodb.Keys)
		if err != nil {
			return nil, nil, err
		}
		newImage, err := imageFromWire(r.Dynamodb.NewImage)
		if err != nil {
			return nil, nil, err
		}
		k := string(d.BaseKey(keys))
		h := byKey[k]
		if h == nil {
			old, err := imageFromWire(r.Dynamodb.OldImage)
			if err != nil {
				return nil, nil, err
			}
			h = &keyHistory{keys: keys, old: old}
			byKey[k] = h
			order = append(order, k)
		}
		h.new, h.at = newImage, uint64(at)
	}
	return order, byKey, iter.Error()
}

func (s *Store) exportFull(ctx context.Context, view *storage.View, d *engine.TableDef, e *ExportDesc, w *exportWriter) error {
	return s.itemsAt(ctx, view, d, e.ExportTime, e.pointInTime, func(it av.Item) error {
		e.Items++
		e.Bytes += int64(av.ItemSize(it))
		line := append([]byte(`{"Item":`), av.AppendItemJSON(nil, it)...)
		return w.write(append(line, '}'))
	})
}

// itemsAt hands emit every item of table d as it was at instant at: the
// items of view, with every change committed after at rolled back to the
// image it replaced when past is set (ADR 0042). Full exports of the past
// and RestoreTableToPointInTime read the past through it.
func (s *Store) itemsAt(ctx context.Context, view *storage.View, d *engine.TableDef, at time.Time, past bool, emit func(av.Item) error) error {
	var undo map[string]*keyHistory
	var order []string
	if past {
		ms := at.UnixMilli()
		var err error
		if order, undo, err = s.history(ctx, view, d, ms+1, math.MaxInt64); err != nil {
			return err
		}
	}
	lo, hi := storage.SpaceKey(d.ID, 0), storage.SpaceKey(d.ID, 1)
	iter, err := view.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer iter.Close()
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if h := undo[string(iter.Key())]; h != nil {
			delete(undo, string(iter.Key()))
			if h.old != nil {
				if err := emit(h.old); err != nil {
					return err
				}
			}
			continue
		}
		it, err := av.DecodeItem(iter.Value())
		if err != nil {
			return err
		}
		if err := emit(it); err != nil {
			return err
		}
	}
	if err := iter.Error(); err != nil {
		return err
	}
	// Items deleted after the instant.
	for _, k := range order {
		if h := undo[k]; h != nil && h.old != nil {
			if err := emit(h.old); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) exportIncremental(ctx context.Context, view *storage.View, d *engine.TableDef, e *ExportDesc, w *exportWriter) error {
	order, byKey, err := s.history(ctx, view, d, e.From.UnixMilli(), e.To.UnixMilli())
	if err != nil {
		return err
	}
	slices.Sort(order) // table key order, as a full export
	for _, k := range order {
		h := byKey[k]
		var line bytes.Buffer
		fmt.Fprintf(&line, `{"Metadata":{"WriteTimestampMicros":{"N":"%d"}},"Keys":`, h.at*1000)
		line.Write(av.AppendItemJSON(nil, h.keys))
		if h.new != nil {
			line.WriteString(`,"NewImage":`)
			line.Write(av.AppendItemJSON(nil, h.new))
			e.Bytes += int64(av.ItemSize(h.new))
		}
		if h.old != nil && e.ViewType == "NEW_AND_OLD_IMAGES" {
			line.WriteString(`,"OldImage":`)
			line.Write(av.AppendItemJSON(nil, h.old))
		}
		line.WriteByte('}')
		e.Items++
		if err := w.write(line.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// exportDescription renders an ExportDescription.
func (s *Store) exportDescription(e *ExportDesc) map[string]any {
	out := map[string]any{
		"ExportArn": e.ARN, "ExportStatus": e.Status, "StartTime": engine.Epoch(e.Start), "TableArn": s.TableARN(e.Table),
		"TableId": e.TableUUID, "S3Bucket": e.Bucket, "S3SseAlgorithm": e.SSEAlgorithm, "ExportFormat": e.Format,
		"ExportType": e.Type, "ExportManifest": e.ManifestKey, "ItemCount": e.Items, "BilledSizeBytes": e.Bytes,
	}
	if e.ClientToken != "" {
		out["ClientToken"] = e.ClientToken
	}
	if e.Prefix != "" {
		out["S3Prefix"] = e.Prefix
	}
	if e.BucketOwner != "" {
		out["S3BucketOwner"] = e.BucketOwner
	}
	if e.SSEKey != "" {
		out["S3SseKmsKeyId"] = e.SSEKey
	}
	if !e.End.IsZero() {
		out["EndTime"] = engine.Epoch(e.End)
	}
	if e.Type == "FULL_EXPORT" {
		out["ExportTime"] = engine.Epoch(e.ExportTime)
	} else {
		out["IncrementalExportSpecification"] = map[string]any{
			"ExportFromTime": engine.Epoch(e.From), "ExportToTime": engine.Epoch(e.To), "ExportViewType": e.ViewType}
	}
	if e.FailureCode != "" {
		out["FailureCode"], out["FailureMessage"] = e.FailureCode, e.FailureMessage
	}
	return out
}

// DescribeExport answers the DescribeExport operation.
func (s *Store) DescribeExport(ctx context.Context, body []byte) (any, error) {
	var in exportARNInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NotNull("exportArn", in.ExportArn == nil)
	if in.ExportArn != nil {
		c.MinLen("exportArn", *in.ExportArn, len(*in.ExportArn), 37)
		c.MaxLen("exportArn", *in.ExportArn, len(*in.ExportArn), 1024)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	raw, err := s.DB.Get(storage.ExportKey(*in.ExportArn))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, exportNotFound(*in.ExportArn)
	}
	if err != nil {
		return nil, err
	}
	var e ExportDesc
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	return map[string]any{"ExportDescription": s.exportDescription(&e)}, nil
}

// ListExports answers the ListExports operation.
func (s *Store) ListExports(ctx context.Context, body []byte) (any, error) {
	var in listExportsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.Min("maxResults", in.MaxResults, 1)
	c.Max("maxResults", in.MaxResults, 25)
	if err := c.Err(); err != nil {
		return nil, err
	}
	all, err := s.LoadExports()
	if err != nil {
		return nil, err
	}
	table := ""
	if in.TableArn != nil {
		if !wire.IsTableARN(*in.TableArn) {
			return nil, wire.Validation("Invalid TableArn: %s", *in.TableArn)
		}
		// Another account's table of the same name is not this one.
		if engine.ARNAccount(*in.TableArn) != "" {
			if err := s.ForeignARN("ListExports", *in.TableArn); err != nil {
				return nil, err
			}
		}
		table = wire.TableNameOf(*in.TableArn)
	}
	// Oldest first, by ARN after the start time: a stable order to page.
	slices.SortFunc(all, func(a, b *ExportDesc) int { return cmp.Or(a.Start.Compare(b.Start), strings.Compare(a.ARN, b.ARN)) })
	limit := 25
	if in.MaxResults != nil {
		limit = int(*in.MaxResults)
	}
	var out []map[string]any
	started := in.NextToken == nil
	var next string
	for _, e := range all {
		if table != "" && e.Table != table {
			continue
		}
		if !started {
			started = e.ARN == *in.NextToken
			continue
		}
		if len(out) == limit {
			next = out[len(out)-1]["ExportArn"].(string)
			break
		}
		out = append(out, map[string]any{"ExportArn": e.ARN, "ExportStatus": e.Status, "ExportType": e.Type})
	}
	if in.NextToken != nil && !started {
		return nil, wire.Validation("Invalid NextToken")
	}
	if out == nil {
		out = []map[string]any{}
	}
	resp := map[string]any{"ExportSummaries": out}
	if next != "" {
		resp["NextToken"] = next
	}
	return resp, nil
}
