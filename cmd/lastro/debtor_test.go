package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"lastro/collections/kit"
	"lastro/collections/pii/piitest"
	"lastro/engine/enginetest"
)

// installmentsJSON builds n monthly instalments from year-month first.
func installmentsJSON(first string, n int, cents string) string {
	var b strings.Builder
	var y, m int
	fmt.Sscanf(first, "%d-%d", &y, &m)
	for i := range n {
		mm := m - 1 + i
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"seq":%d,"dueDate":"%04d-%02d-10","principalCents":%s,"interestCents":750}`, i+1, y+mm/12, mm%12+1, cents)
	}
	return "[" + b.String() + "]"
}

// streamRecords reads every record of the table's stream through the
// DynamoDB Streams API of the embedded store.
func streamRecords(t *testing.T, te *enginetest.Env) []st.Record {
	t.Helper()
	ctx := context.Background()
	sc := dynamodbstreams.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}},
		func(o *dynamodbstreams.Options) {
			o.BaseEndpoint, o.HTTPClient = aws.String(kit.InProcessEndpoint), te.StoreClient
		})
	list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(te.Kit.Table())})
	if err != nil || len(list.Streams) == 0 {
		t.Fatalf("list streams: %v", err)
	}
	var out []st.Record
	for _, s := range list.Streams {
		desc, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: s.StreamArn})
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range desc.StreamDescription.Shards {
			it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: s.StreamArn, ShardId: sh.ShardId,
				ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
			if err != nil {
				t.Fatal(err)
			}
			iter := it.ShardIterator
			for range 1000 {
				recs, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, recs.Records...)
				if len(recs.Records) == 0 || recs.NextShardIterator == nil {
					break
				}
				iter = recs.NextShardIterator
			}
		}
	}
	return out
}

// texts flattens attribute values into the strings a leak could hide in:
// strings, numbers, and binaries both raw and base64.
func texts(v any) []string {
	switch v := v.(type) {
	case map[string]types.AttributeValue:
		var out []string
		for k, a := range v {
			out = append(out, k)
			out = append(out, texts(a)...)
		}
		return out
	case *types.AttributeValueMemberS:
		return []string{v.Value}
	case *types.AttributeValueMemberN:
		return []string{v.Value}
	case *types.AttributeValueMemberB:
		return []string{string(v.Value), base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberSS:
		return v.Value
	case *types.AttributeValueMemberL:
		var out []string
		for _, a := range v.Value {
			out = append(out, texts(a)...)
		}
		return out
	case *types.AttributeValueMemberM:
		return texts(v.Value)
	}
	return nil
}

func streamTexts(v any) []string {
	switch v := v.(type) {
	case map[string]st.AttributeValue:
		var out []string
		for k, a := range v {
			out = append(out, k)
			out = append(out, streamTexts(a)...)
		}
		return out
	case *st.AttributeValueMemberS:
		return []string{v.Value}
	case *st.AttributeValueMemberN:
		return []string{v.Value}
	case *st.AttributeValueMemberB:
		return []string{string(v.Value), base64.StdEncoding.EncodeToString(v.Value)}
	case *st.AttributeValueMemberL:
		var out []string
		for _, a := range v.Value {
			out = append(out, streamTexts(a)...)
		}
		return out
	case *st.AttributeValueMemberM:
		return streamTexts(v.Value)
	}
	return nil
}

// The test subjects (piitest): synthetic, and unique enough that a hit
// is a leak.
const (
	cpfDigits = piitest.CPFDigits
	subject   = piitest.Name
	phone     = piitest.Phone
	email     = piitest.Email
)

func leaks(s string) []string { return piitest.Leaks(s) }

// TestNoPersonalDataEscapes runs a whole scenario through the HTTP API of
// the engine — register a CPF and a CNPJ debtor, sign contracts, read the
// 360, the instalments and the audit trail, look up, collide with bad
// input, reveal — and then searches every response body (but the reveal's),
// every log line, every item of the table and every stream record for the
// documents in any formatting, the name, the phone and the e-mail.
func TestNoPersonalDataEscapes(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	k := te.CreateTenant(t, "t-pii")
	op, comp := k["operator"], k["compliance"]
	var bodies []string
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		status, b := te.Raw(t, method, path, token, body, "Idempotency-Key", "")
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		bodies = append(bodies, b)
		return enginetest.JSON(t, b)
	}
	reg := call("POST", "/v1/debtors", op, `{"document":"529.982.247-25","name":"`+subject+`","phone":"`+phone+`","email":"`+email+`"}`, 201)
	dk := reg["debtorKey"].(string)
	call("POST", "/v1/debtors", op, `{"document":"`+cpfDigits+`","name":"`+subject+`"}`, 200)
	comp2 := call("POST", "/v1/debtors", op, `{"document":"11.222.333/0001-81","name":"`+subject+` Ltda","email":"`+email+`"}`, 201)
	dk2 := comp2["debtorKey"].(string)
	call("POST", "/v1/debtors/lookup", op, `{"document":"11222333/0001-81"}`, 200)
	call("POST", "/v1/debtors/lookup", op, `{"document":"529982247-25"}`, 200)
	// Bad input carrying personal data: the errors must not echo it.
	call("POST", "/v1/debtors", op, `{"document":"529.982.247-24","name":"`+subject+`"}`, 400)
	call("POST", "/v1/debtors", op, `{"document":"`+cpfDigits+`","name":"`+subject+`","phone":"98765-4321x"}`, 400)
	call("POST", "/v1/debtors", op, `{"document":"`+cpfDigits+`","name":"`+subject+`","email":"`+subject+` <`+email+`>"}`, 400)
	call("POST", "/v1/debtors", op, `{"document":"`+cpfDigits+`","nome":"`+subject+`"}`, 400)
	call("POST", "/v1/debtors/lookup", op, `{"document":"529.982.247-2"}`, 400)
	for i, d := range []string{dk, dk2} {
		path := "/v1/debtors/" + d + "/contracts"
		call("POST", path, op, `{"contractId":"C-PII-`+fmt.Sprint(i)+`","productCode":"CREDIARIO_12X","installments":`+installmentsJSON("2026-07", 12, "41230")+`}`, 201)
		call("GET", "/v1/debtors/"+d, op, "", 200)
		call("GET", "/v1/debtors/"+d+"/contracts/C-PII-"+fmt.Sprint(i)+"/installments?status=open", op, "", 200)
		call("GET", "/v1/debtors/"+d+"/contracts/C-PII-"+fmt.Sprint(i)+"/installments/0/events", comp, "", 200)
	}
	call("POST", "/v1/debtors/"+dk+"/contracts", op, `{"contractId":"C-PII-0","productCode":"X","installments":[{"seq":1,"dueDate":"2026-10-10","principalCents":1,"interestCents":0}]}`, 409)
	// The reveal is the one answer allowed to hold the document. It comes
	// a minute later: events sort by time, latest first, and the
	// fixture's clock stands still.
	te.Clock.Advance(time.Minute)
	status, revealed := te.Raw(t, "POST", "/v1/debtors/"+dk+"/reveal", comp, `{"reason":"LEGAL_REQUEST"}`)
	if status != 200 || !strings.Contains(revealed, "529.982.247-25") {
		t.Fatalf("reveal: %d %s", status, revealed)
	}
	status, revealed2 := te.Raw(t, "POST", "/v1/debtors/"+dk2+"/reveal", comp, "")
	if status != 200 || !strings.Contains(revealed2, "11.222.333/0001-81") {
		t.Fatalf("reveal CNPJ: %d %s", status, revealed2)
	}
	// After the reveal, the audit trail shows it without the document.
	v := call("GET", "/v1/debtors/"+dk, op, "", 200)
	if evs := v["events"].([]any); len(evs) != 2 || evs[0].(map[string]any)["eventType"] != "DocumentRevealed" {
		t.Fatalf("reveal audit event: %v", v["events"])
	}

	if leaks(revealed) == nil || leaks(revealed2) == nil {
		t.Fatal("the detector does not see the revealed documents: it would miss a leak")
	}
	for i, b := range bodies {
		if hits := leaks(b); hits != nil {
			t.Errorf("response %d holds %v: %s", i, hits, b)
		}
	}
	if hits := leaks(te.Logs.String()); hits != nil {
		t.Errorf("logs hold %v", hits)
	}
	items := te.ScanAll(t)
	profiles := 0
	for _, it := range items {
		sk := it["SK"].(*types.AttributeValueMemberS).Value
		if sk == "PROFILE" {
			profiles++
			if b, ok := it["pii"].(*types.AttributeValueMemberB); !ok || len(b.Value) < 200 {
				t.Errorf("PROFILE without ciphertext: %v", it)
			} else {
				t.Logf("PROFILE ciphertext %d bytes", len(b.Value))
			}
		}
		if hits := leaks(strings.Join(texts(it), "\n")); hits != nil {
			t.Errorf("item %s holds %v", sk, hits)
		}
	}
	if profiles != 2 {
		t.Fatalf("%d PROFILE items", profiles)
	}
	recs := streamRecords(t, te)
	if len(recs) < len(items) {
		t.Fatalf("%d stream records for %d items", len(recs), len(items))
	}
	for _, r := range recs {
		var all []string
		if r.Dynamodb != nil {
			all = append(all, streamTexts(r.Dynamodb.Keys)...)
			all = append(all, streamTexts(r.Dynamodb.NewImage)...)
			all = append(all, streamTexts(r.Dynamodb.OldImage)...)
		}
		if hits := leaks(strings.Join(all, "\n")); hits != nil {
			t.Errorf("stream record %s holds %v", aws.ToString(r.EventID), hits)
		}
	}
	t.Logf("searched %d responses, %d log bytes, %d items, %d stream records", len(bodies), len(te.Logs.String()), len(items), len(recs))
}
