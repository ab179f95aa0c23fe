package agenda

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/web"
)

// RunInput is the body of POST /v1/agenda/run: the date to run (default:
// the tenant's today) and the shards (default: all of them).
type RunInput struct {
	Date   string `json:"date,omitempty"`
	Shards []int  `json:"shards,omitempty"`
}

// Routes registers the agenda endpoints. They need Deps.Tenants.
func (r *Runner) Routes(srv *web.Server) {
	sup := []web.Role{web.Supervisor}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/agenda/run",
		Summary: "Run the dunning workers now for {date?, shards?} (default: the tenant's today, every shard) and return what they did: " +
			"actions executed, contact steps blocked (by reason), entries skipped, per shard. A shard another worker holds is waited for " +
			"while its lease runs out (a killed worker's is taken over then) and otherwise listed in busy; 409 shards_busy when every " +
			"shard asked for is busy. 400 on a bad date or shard; 422 on a date after today",
		Roles: sup, Request: RunInput{Date: "2026-09-24", Shards: []int{0, 1}}, Response: Report{}}, r.postRun)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/agenda",
		Summary: "AP03/AP04/AP10: the contracts whose next action is due on ?date= (default today), one GSI1 Query per shard, narrowed by " +
			"?action= (begins_with <action>#). With ?shard= one shard; without it the shards are read in order, one Query each, and the cursor " +
			"carries the shard it stopped in",
		Roles: sup, Response: List{}, Query: []string{"date", "shard", "action", "limit", "cursor"}}, r.getAgenda)
}

func (r *Runner) postRun(c echo.Context) error {
	if r.d.Tenants == nil {
		return errors.New("agenda: routes need Deps.Tenants")
	}
	t, err := r.d.Tenants.From(c)
	if err != nil {
		return err
	}
	var in RunInput
	if c.Request().ContentLength != 0 {
		if err := web.Bind(c, &in); err != nil {
			return err
		}
	}
	today := calendar.Today(r.d.Clock.Now(), t.Location)
	date := today
	if in.Date != "" {
		if date, err = calendar.Parse(in.Date); err != nil {
			return errs.E(errs.Invalid, "invalid_date", "date must be YYYY-MM-DD")
		}
	}
	if date.After(today) {
		return errs.E(errs.Rule, "date_in_future", "date %s is after today (%s): the agenda of a day runs on that day", date, today)
	}
	seen := map[int]bool{}
	for _, s := range in.Shards {
		if s < 0 || s >= t.Shards || seen[s] {
			return errs.E(errs.Invalid, "invalid_shard", "shards must be distinct numbers 0-%d", t.Shards-1)
		}
		seen[s] = true
	}
	var shards []int
	if len(in.Shards) > 0 {
		shards = in.Shards
	}
	// The request's context bounds the run: a client that gives up stops
	// the workers, which leave their checkpoints for the next run.
	// A shard whose lease is held is waited for up to a lease's time: a
	// worker killed a moment ago renews it no more and is taken over,
	// rather than the run answering "done" with nothing run (ADR 0063).
	rep, err := r.Run(c.Request().Context(), t, date, Options{Shards: shards, Wait: r.d.Lease + time.Second})
	r.YieldInterrupted(c.Request().Context(), t, rep)
	if err != nil {
		return err
	}
	if len(rep.Busy) > 0 && len(rep.Busy) == len(rep.Shards) {
		return errs.E(errs.Conflict, "shards_busy", "every shard asked for is being run by another worker (shards %s): nothing ran; try again when it finishes",
			shardList(rep.Busy))
	}
	return c.JSON(http.StatusOK, rep)
}

// shardList is shards as "0, 1, 5".
func shardList(shards []int) string {
	parts := make([]string, len(shards))
	for i, s := range shards {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

var actionPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)

func (r *Runner) getAgenda(c echo.Context) error {
	if r.d.Tenants == nil {
		return errors.New("agenda: routes need Deps.Tenants")
	}
	t, err := r.d.Tenants.From(c)
	if err != nil {
		return err
	}
	q := ListQuery{Shard: -1, Action: c.QueryParam("action")}
	if q.Limit, err = web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit); err != nil {
		return err
	}
	q.Date = calendar.Today(r.d.Clock.Now(), t.Location)
	if s := c.QueryParam("date"); s != "" {
		if q.Date, err = calendar.Parse(s); err != nil {
			return errs.E(errs.Invalid, "invalid_date", "date must be YYYY-MM-DD")
		}
	}
	if s := c.QueryParam("shard"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= t.Shards {
			return errs.E(errs.Invalid, "invalid_shard", "shard must be 0-%d", t.Shards-1)
		}
		q.Shard = n
	}
	if q.Action != "" && !actionPattern.MatchString(q.Action) {
		return errs.E(errs.Invalid, "invalid_action", "action must be an agenda action such as DUE_CHECK or SMS_D5")
	}
	out, err := r.List(c.Request().Context(), t, q, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
