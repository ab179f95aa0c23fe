package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/contract"
)

// Export is what a report reads of one full export.
type Export struct {
	Dir        string    // the folder holding manifest-summary.json
	ExportArn  string    // as the summary names it
	ExportTime time.Time // the instant the export is of
	Positions  []Position
}

// summary is the part of manifest-summary.json a report reads.
type summary struct {
	ExportArn          string `json:"exportArn"`
	ExportTime         string `json:"exportTime"`
	ExportType         string `json:"exportType"`
	OutputFormat       string `json:"outputFormat"`
	ManifestFilesS3Key string `json:"manifestFilesS3Key"`
}

// tenantItem is the part of a TENANT item a report needs: the zone that
// makes the export's instant a civil date, and the extra holidays.
type tenantItem struct {
	TenantID string   `dynamodbav:"tenantId"`
	TimeZone string   `dynamodbav:"timezone"`
	Holidays []string `dynamodbav:"holidays"`
}

// FindExport resolves dir to an export folder: dir itself when it holds
// manifest-summary.json, else the only (or the newest, by export id)
// AWSDynamoDB/<exportId> folder under it.
func FindExport(dir string) (string, error) {
	// Clean: a trailing slash (as a shell completes a folder) would keep
	// ReadExport from finding the bucket folder above the export.
	dir = filepath.Clean(dir)
	if _, err := os.Stat(filepath.Join(dir, "manifest-summary.json")); err == nil {
		return dir, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "AWSDynamoDB", "*", "manifest-summary.json"))
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("%s holds no completed export (no manifest-summary.json in it or in AWSDynamoDB/*/)", dir)
	}
	// Export ids start with the start time in milliseconds, zero-padded.
	slices.Sort(matches)
	return filepath.Dir(matches[len(matches)-1]), nil
}

// ReadExport reads a full export's files (and nothing else): the contract
// headers and instalments, grouped per contract, each contract's state
// derived as of the export's date in its tenant's time zone by the
// contract package's own rules (contract.FactsOn), not read from the
// stored bucket, which may be stale.
func ReadExport(dir string) (*Export, error) {
	dir, err := FindExport(dir)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest-summary.json"))
	if err != nil {
		return nil, err
	}
	var sum summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		return nil, fmt.Errorf("manifest-summary.json: %w", err)
	}
	if sum.ExportType != "" && sum.ExportType != "FULL_EXPORT" {
		return nil, fmt.Errorf("%s is an %s: aging and roll rate need a full export", dir, sum.ExportType)
	}
	if sum.OutputFormat != "DYNAMODB_JSON" {
		return nil, fmt.Errorf("%s is in %s: only DYNAMODB_JSON exports are read", dir, sum.OutputFormat)
	}
	at, err := time.Parse(time.RFC3339Nano, sum.ExportTime)
	if err != nil {
		return nil, fmt.Errorf("manifest-summary.json exportTime %q: %w", sum.ExportTime, err)
	}
	ex := &Export{Dir: dir, ExportArn: sum.ExportArn, ExportTime: at}
	// The bucket folder is above the export's key: <bucket>/<manifestFilesS3Key>.
	bucket := strings.TrimSuffix(filepath.ToSlash(dir), "/"+strings.TrimSuffix(sum.ManifestFilesS3Key, "/manifest-files.json"))
	files, err := os.ReadFile(filepath.Join(dir, "manifest-files.json"))
	if err != nil {
		return nil, err
	}
	contracts := map[string]*contract.Contract{}
	var order []string
	tenants := map[string]tenantItem{}
	for line := range bytes.Lines(files) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var f struct {
			DataFileS3Key string `json:"dataFileS3Key"`
		}
		if err := json.Unmarshal(line, &f); err != nil {
			return nil, fmt.Errorf("manifest-files.json: %w", err)
		}
		path := filepath.Join(filepath.FromSlash(bucket), filepath.FromSlash(f.DataFileS3Key))
		// A manifest names files by key; a key reaching outside the
		// export's own folder is not one of its data files.
		if rel, err := filepath.Rel(dir, path); err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("manifest-files.json: data file %q is outside the export", f.DataFileS3Key)
		}
		err := readDataFile(path, func(typ string, it kit.Item) error {
			switch typ {
			case "TENANT":
				var t tenantItem
				if err := attributevalue.UnmarshalMap(it, &t); err != nil {
					return err
				}
				tenants[t.TenantID] = t
			case contract.TypeHeader:
				var h contract.Header
				if err := attributevalue.UnmarshalMap(it, &h); err != nil {
					return fmt.Errorf("contract header: %w", err)
				}
				k := h.PK + "\x00" + h.SK
				c := contracts[k]
				if c == nil {
					c = &contract.Contract{}
					contracts[k] = c
					order = append(order, k)
				}
				c.Header = h
			case contract.TypeInstallment:
				var in contract.Installment
				if err := attributevalue.UnmarshalMap(it, &in); err != nil {
					return fmt.Errorf("instalment: %w", err)
				}
				sk, _, ok := strings.Cut(in.SK, "#IN#")
				if !ok {
					return nil
				}
				k := in.PK + "\x00" + sk
				c := contracts[k]
				if c == nil {
					c = &contract.Contract{}
					contracts[k] = c
					order = append(order, k)
				}
				c.Installments = append(c.Installments, in)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.DataFileS3Key, err)
		}
	}
	slices.Sort(order)
	for _, k := range order {
		c := contracts[k]
		if c.Header.ContractID == "" {
			continue // instalments of a header the export does not hold
		}
		t := tenants[c.Header.TenantID]
		p, err := position(c, at, t)
		if err != nil {
			return nil, err
		}
		ex.Positions = append(ex.Positions, p)
	}
	return ex, nil
}

// position derives a contract's state on the export's date.
func position(c *contract.Contract, at time.Time, t tenantItem) (Position, error) {
	loc := time.UTC
	if t.TimeZone != "" {
		l, err := time.LoadLocation(t.TimeZone)
		if err != nil {
			return Position{}, fmt.Errorf("tenant time zone %q: %w", t.TimeZone, err)
		}
		loc = l
	}
	cal := calendar.National
	if len(t.Holidays) > 0 {
		var extra []calendar.Date
		for _, h := range t.Holidays {
			d, err := calendar.Parse(h)
			if err != nil {
				return Position{}, fmt.Errorf("tenant holiday %q: %w", h, err)
			}
			extra = append(extra, d)
		}
		cal = calendar.New(extra...)
	}
	slices.SortFunc(c.Installments, func(a, b contract.Installment) int { return a.Seq - b.Seq })
	if n := c.Header.InstallmentCount; n > 0 {
		// Instalments past the header's count belong to an agreement that
		// never committed (contract.Load applies the same rule).
		for len(c.Installments) > 0 && c.Installments[len(c.Installments)-1].Seq > n {
			c.Installments = c.Installments[:len(c.Installments)-1]
		}
	}
	f := c.FactsOn(calendar.Of(at, loc), cal)
	p := Position{TenantID: c.Header.TenantID, ContractID: c.Header.ContractID, DaysPastDue: f.DaysPastDue, OutstandingCents: f.OutstandingCents}
	switch {
	case f.Status == contract.StatusSettled || f.Status == contract.StatusWrittenOff || f.Status == contract.StatusInAgreement:
		p.State = f.Status
	case f.Bucket != nil && *f.Bucket != "":
		p.State = *f.Bucket
	case f.Status == contract.StatusActive || f.Status == contract.StatusInCollection:
		p.State = StateCurrent
	default:
		p.State = f.Status
	}
	return p, nil
}

// readDataFile calls fn with the type and the item of every line of a
// gzipped DynamoDB-JSON data file whose type is one a report reads; the
// other items are passed over without decoding their attributes.
func readDataFile(path string, fn func(typ string, it kit.Item) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20) // an item is at most 400 KB
	for sc.Scan() {
		var line struct {
			Item map[string]json.RawMessage `json:"Item"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return err
		}
		var typ struct{ S string }
		if raw, ok := line.Item["type"]; !ok || json.Unmarshal(raw, &typ) != nil {
			continue
		}
		switch typ.S {
		case "TENANT", contract.TypeHeader, contract.TypeInstallment:
		default:
			continue
		}
		it := make(kit.Item, len(line.Item))
		for name, raw := range line.Item {
			v, err := decodeAttr(raw)
			if err != nil {
				return fmt.Errorf("attribute %s: %w", name, err)
			}
			it[name] = v
		}
		if err := fn(typ.S, it); err != nil {
			return err
		}
	}
	return errors.Join(sc.Err(), gz.Close())
}

// decodeAttr decodes one attribute value in DynamoDB JSON.
func decodeAttr(raw json.RawMessage) (types.AttributeValue, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if len(w) != 1 {
		return nil, fmt.Errorf("an attribute value has exactly one type, got %d", len(w))
	}
	for t, v := range w {
		switch t {
		case "S", "N":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			if t == "S" {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case "B":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			return &types.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			var b bool
			err := json.Unmarshal(v, &b)
			return &types.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS", "NS":
			var ss []string
			if err := json.Unmarshal(v, &ss); err != nil {
				return nil, err
			}
			if t == "SS" {
				return &types.AttributeValueMemberSS{Value: ss}, nil
			}
			return &types.AttributeValueMemberNS{Value: ss}, nil
		case "BS":
			var ss []string
			if err := json.Unmarshal(v, &ss); err != nil {
				return nil, err
			}
			out := make([][]byte, len(ss))
			for i, s := range ss {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, err
				}
				out[i] = b
			}
			return &types.AttributeValueMemberBS{Value: out}, nil
		case "L":
			var l []json.RawMessage
			if err := json.Unmarshal(v, &l); err != nil {
				return nil, err
			}
			out := make([]types.AttributeValue, len(l))
			for i, e := range l {
				av, err := decodeAttr(e)
				if err != nil {
					return nil, err
				}
				out[i] = av
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		case "M":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return nil, err
			}
			out := make(map[string]types.AttributeValue, len(m))
			for k, e := range m {
				av, err := decodeAttr(e)
				if err != nil {
					return nil, err
				}
				out[k] = av
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		default:
			return nil, fmt.Errorf("unknown attribute type %q", t)
		}
	}
	return nil, nil
}
