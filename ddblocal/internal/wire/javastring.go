package wire

import (
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
)

// DynamoDB's request validation echoes some collection members in its
// messages as the Java toString of its request model (Lombok style, e.g.
// "WriteRequest(putRequest=PutRequest(item={pk=AttributeValue(s=a, n=null,
// ...)}, workloadProfileName=null), deleteRequest=null)"). These renderers
// reproduce that form. Java maps iterate in hash order, which is not
// reproducible here: map entries are rendered sorted by key instead.

// JavaWriteRequests renders a BatchWriteItem RequestItems map, as echoed
// at 'requestItems'.
func JavaWriteRequests(items map[string][]*WriteRequest) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range SortedKeys(items) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString("=")
		reqs := items[name]
		if reqs == nil {
			b.WriteString("null")
			continue
		}
		b.WriteByte('[')
		for j, w := range reqs {
			if j > 0 {
				b.WriteString(", ")
			}
			javaWriteRequest(&b, w)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

func javaWriteRequest(b *strings.Builder, w *WriteRequest) {
	if w == nil {
		b.WriteString("null")
		return
	}
	b.WriteString("WriteRequest(putRequest=")
	if p := w.PutRequest; p != nil {
		b.WriteString("PutRequest(item=")
		javaItem(b, p.Item)
		b.WriteString(", workloadProfileName=null)")
	} else {
		b.WriteString("null")
	}
	b.WriteString(", deleteRequest=")
	if d := w.DeleteRequest; d != nil {
		// Only PutRequest has been seen echoed; DeleteRequest is assumed to
		// carry the same internal member.
		b.WriteString("DeleteRequest(key=")
		javaItem(b, d.Key)
		b.WriteString(", workloadProfileName=null)")
	} else {
		b.WriteString("null")
	}
	b.WriteByte(')')
}

// javaItem renders a map of attribute values: {a=AttributeValue(...), ...}.
func javaItem(b *strings.Builder, it map[string]*av.Wire) {
	if it == nil {
		b.WriteString("null")
		return
	}
	b.WriteByte('{')
	for i, k := range SortedKeys(it) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		javaAttributeValue(b, it[k])
	}
	b.WriteByte('}')
}

// javaAttributeValue renders one AttributeValue with every member of the
// model, the unset ones as null.
func javaAttributeValue(b *strings.Builder, w *av.Wire) {
	if w == nil {
		b.WriteString("null")
		return
	}
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	strs := func(p *[]string) string {
		if p == nil {
			return "null"
		}
		return JavaList(*p)
	}
	bin := func(p []byte) string {
		n := strconv.Itoa(len(p))
		return "java.nio.HeapByteBuffer[pos=0 lim=" + n + " cap=" + n + "]"
	}
	boolean := func(p *bool) string {
		if p == nil {
			return "null"
		}
		return strconv.FormatBool(*p)
	}
	b.WriteString("AttributeValue(s=" + str(w.S) + ", n=" + str(w.N) + ", b=")
	if w.B != nil {
		b.WriteString(bin(*w.B))
	} else {
		b.WriteString("null")
	}
	b.WriteString(", iNT=null, dECIMAL=null, dOUBLE=null, sS=" + strs(w.SS) + ", nS=" + strs(w.NS) + ", bS=")
	if w.BS != nil {
		parts := make([]string, len(*w.BS))
		for i, v := range *w.BS {
			parts[i] = bin(v)
		}
		b.WriteString(JavaList(parts))
	} else {
		b.WriteString("null")
	}
	b.WriteString(", iNTSET=null, dECIMALSET=null, dOUBLESET=null, m=")
	if w.M != nil {
		javaItem(b, *w.M)
	} else {
		b.WriteString("null")
	}
	b.WriteString(", l=")
	if w.L != nil {
		b.WriteByte('[')
		for i, v := range *w.L {
			if i > 0 {
				b.WriteString(", ")
			}
			javaAttributeValue(b, v)
		}
		b.WriteByte(']')
	} else {
		b.WriteString("null")
	}
	b.WriteString(", nULL=" + boolean(w.NULL) + ", bOOL=" + boolean(w.BOOL) + ")")
}
