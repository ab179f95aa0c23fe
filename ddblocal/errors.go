package ddblocal

import (
	"fmt"
)

// apiError is an error answered to the client in DynamoDB's error shape.
type apiError struct {
	Type    string // e.g. "ValidationException"
	Message string
	Status  int
	// extra members of the error body (CancellationReasons, Item)
	Reasons []cancellationReason
	Item    map[string]any
}

type cancellationReason struct {
	Code    string         `json:"Code"`
	Message string         `json:"Message,omitempty"`
	Item    map[string]any `json:"Item,omitempty"`
}

func (e *apiError) Error() string { return e.Type + ": " + e.Message }

// namespace returns the __type prefix DynamoDB uses for the error.
func (e *apiError) namespace() string {
	switch e.Type {
	case "ValidationException":
		return "com.amazon.coral.validate#"
	case "SerializationException", "UnknownOperationException", "MissingAuthenticationTokenException",
		"UnrecognizedClientException", "AccessDeniedException":
		return "com.amazon.coral.service#"
	}
	return "com.amazonaws.dynamodb.v20120810#"
}

func validation(format string, args ...any) *apiError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &apiError{Type: "ValidationException", Message: msg, Status: 400}
}

func notFound(msg string) *apiError {
	return &apiError{Type: "ResourceNotFoundException", Message: msg, Status: 400}
}

func errResourceNotFound() *apiError {
	return notFound("Requested resource not found")
}

func resourceInUse(msg string) *apiError {
	return &apiError{Type: "ResourceInUseException", Message: msg, Status: 400}
}

func conditionalFailed() *apiError {
	return &apiError{Type: "ConditionalCheckFailedException", Message: "The conditional request failed", Status: 400}
}

func serialization(msg string) *apiError {
	return &apiError{Type: "SerializationException", Message: msg, Status: 400}
}

func internal(err error) *apiError {
	return &apiError{Type: "InternalServerError", Message: "Internal server error", Status: 500}
}
