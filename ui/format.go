package ui

import "strings"

// safeNext keeps a post-login destination only when it is a path of the
// web pages: anything else (another host, a scheme, //) goes to "/",
// which sends each role to its start page.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/"
}
