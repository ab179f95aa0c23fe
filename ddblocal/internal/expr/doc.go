// Package expr parses, validates and evaluates DynamoDB expressions:
// ConditionExpression and FilterExpression, UpdateExpression,
// ProjectionExpression and the KeyConditionExpression of Query.
//
// The aim is to behave exactly like DynamoDB, including the text of every
// ValidationException and the order in which problems are reported, which
// follows DynamoDB's own pipeline:
//
//  1. the expression must not be empty nor longer than 4 KB;
//  2. it is tokenized and parsed (syntax errors, redundant parentheses);
//  3. the parse tree is walked in textual order (reserved words, function
//     names and the places functions may appear, list index ranges,
//     repeated update sections);
//  4. the tree is validated (expression attribute names and values, operand
//     counts and types, overlapping document paths, and so on).
//
// Everything here is pure: no I/O, no global state beyond read-only tables.
// Errors returned by Parse*, Apply and CheckUnused are *Error values whose
// Msg is the message DynamoDB puts in its ValidationException.
package expr
