package ddblocal_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// BenchmarkExport100k measures a full export of 100,000 small items, from
// the request to COMPLETED (files gzipped and synced); items/s is the
// export's throughput.
func BenchmarkExport100k(b *testing.B) {
	e := newExportEnvTB(b)
	const n = 100_000
	writeItems(b, e.c, n)
	b.ResetTimer()
	for b.Loop() {
		e.export(&dynamodb.ExportTableToPointInTimeInput{S3Bucket: aws.String("bench")})
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "items/s")
	if rcu := e.srv.Store.ConsumedCapacity("orders").ReadCapacityUnits; rcu != 0 {
		b.Fatalf("export consumed %v RCU", rcu)
	}
}
