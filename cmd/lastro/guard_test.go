package main

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/labstack/echo/v4"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/web"
	"lastro/engine/enginetest"
)

// TestHandlersCannotCrossTenants registers handlers the way domain packages
// do — kit handle of the caller's tenant, keys built from request input —
// and shows that a handler building another tenant's key is refused (403)
// and that forged or cross-query cursors are 400.
func TestHandlersCannotCrossTenants(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	// Routes are registered before the first request: echo sizes its
	// pooled contexts' parameter slots when a route is added.
	roles := []web.Role{web.Operator}
	handle := func(c echo.Context) (*kit.Tenant, error) {
		tn, err := te.Tenants.From(c)
		if err != nil {
			return nil, err
		}
		return te.Kit.Tenant(tn.ID, tn.CursorKey()), nil
	}
	// A buggy handler that takes the tenant from the URL instead of the key.
	te.Web.Handle(web.Doc{Method: http.MethodPut, Path: "/test/:tenant/notes/:id", Roles: roles}, func(c echo.Context) error {
		db, err := handle(c)
		if err != nil {
			return err
		}
		item := kit.Item{"PK": &types.AttributeValueMemberS{Value: keys.Debtor(c.Param("tenant"), "d1")},
			"SK": &types.AttributeValueMemberS{Value: keys.Contract(c.Param("id"))}}
		if err := db.Put(c.Request().Context(), item, nil); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	})
	te.Web.Handle(web.Doc{Method: http.MethodGet, Path: "/test/:tenant/notes", Roles: roles, Query: []string{"cursor", "prefix"}}, func(c echo.Context) error {
		db, err := handle(c)
		if err != nil {
			return err
		}
		q := kit.Query{Partition: keys.Debtor(c.Param("tenant"), "d1"), Sort: kit.BeginsWith(c.QueryParam("prefix")), Limit: 1}
		page, err := db.QueryPage(c.Request().Context(), q, c.QueryParam("cursor"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"count": len(page.Items), "nextCursor": page.Next})
	})

	a := te.CreateTenant(t, "t-a")
	b := te.CreateTenant(t, "t-b")
	for _, id := range []string{"C-1", "C-2", "C-3"} {
		if status, out := te.Do(t, "PUT", "/test/t-a/notes/"+id, a["operator"], ""); status != 204 {
			t.Fatalf("own write: %d %v", status, out)
		}
	}
	if status, out := te.Do(t, "PUT", "/test/t-a/notes/C-9", b["operator"], ""); status != 403 || enginetest.ErrorCode(out) != "tenant_guard" {
		t.Fatalf("cross-tenant write: %d %v", status, out)
	}
	if status, out := te.Do(t, "GET", "/test/t-a/notes?prefix=CT%23", b["operator"], ""); status != 403 || enginetest.ErrorCode(out) != "tenant_guard" {
		t.Fatalf("cross-tenant read: %d %v", status, out)
	}
	status, out := te.Do(t, "GET", "/test/t-a/notes?prefix=CT%23", a["operator"], "")
	cursor, _ := out["nextCursor"].(string)
	if status != 200 || out["count"] != float64(1) || cursor == "" {
		t.Fatalf("first page: %d %v", status, out)
	}
	for name, path := range map[string]string{
		"forged cursor":      "/test/t-a/notes?prefix=CT%23&cursor=" + cursor[:len(cursor)-2] + "xx",
		"cross-query cursor": "/test/t-a/notes?prefix=CT%23C&cursor=" + cursor,
	} {
		if status, out := te.Do(t, "GET", path, a["operator"], ""); status != 400 || enginetest.ErrorCode(out) != "invalid_cursor" {
			t.Errorf("%s: %d %v", name, status, out)
		}
	}
	if status, out := te.Do(t, "GET", "/test/t-a/notes?prefix=CT%23&cursor="+cursor, a["operator"], ""); status != 200 || out["count"] != float64(1) {
		t.Fatalf("second page: %d %v", status, out)
	}
}
