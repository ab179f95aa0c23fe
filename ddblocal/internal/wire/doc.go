// Package wire is the store's protocol layer: the request and response
// shapes of the DynamoDB JSON 1.0 protocol, the API errors and their
// wire shape, request decoding, and the validation layer (the member
// constraints and the wording of each DynamoDB validation layer,
// ADR 0060). It knows nothing of tables or storage, so every package of
// the store may import it (ADR 0061).
package wire
