package kit

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffRetryIsBounded(t *testing.T) {
	t.Parallel()
	errBusy := errors.New("busy")
	tests := []struct {
		name      string
		b         Backoff
		succeedAt int   // the attempt that stops asking for a retry; 0: never
		fail      error // the error each retrying attempt returns
		calls     int
		exhausted bool
	}{
		{"success at once", Backoff{Attempts: 3, Base: time.Microsecond}, 1, nil, 1, false},
		{"success on the last attempt", Backoff{Attempts: 3, Base: time.Microsecond}, 3, nil, 3, false},
		{"never succeeds", Backoff{Attempts: 4, Base: time.Microsecond}, 0, nil, 4, true},
		{"never succeeds, wraps the last error", Backoff{Attempts: 2, Base: time.Microsecond}, 0, errBusy, 2, true},
		{"zero value makes one attempt", Backoff{}, 0, nil, 1, true},
		{"negative attempts make one", Backoff{Attempts: -5}, 0, nil, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := tt.b.Retry(context.Background(), func(attempt int) (bool, error) {
				calls++
				if attempt != calls {
					t.Errorf("attempt %d on call %d", attempt, calls)
				}
				if attempt == tt.succeedAt {
					return false, nil
				}
				return true, tt.fail
			})
			if calls != tt.calls {
				t.Errorf("%d calls, want %d", calls, tt.calls)
			}
			if errors.Is(err, ErrAttemptsExhausted) != tt.exhausted || (!tt.exhausted && err != nil) {
				t.Errorf("err = %v", err)
			}
			if tt.fail != nil && !errors.Is(err, tt.fail) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.fail)
			}
		})
	}
}

func TestBackoffRetryReturnsAFinalError(t *testing.T) {
	t.Parallel()
	errFatal := errors.New("fatal")
	calls := 0
	err := Backoff{Attempts: 5, Base: time.Microsecond}.Retry(context.Background(), func(int) (bool, error) {
		calls++
		return false, errFatal
	})
	if calls != 1 || !errors.Is(err, errFatal) || errors.Is(err, ErrAttemptsExhausted) {
		t.Fatalf("%d calls, err %v", calls, err)
	}
}

func TestBackoffRetryStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    Backoff
		want error
	}{
		// An hour's delay: only the context's end can return in time.
		{"cancelled during a long delay", Backoff{Attempts: 10, Base: time.Hour}, context.Canceled},
		{"deadline during a long delay", Backoff{Attempts: 10, Base: time.Hour}, context.DeadlineExceeded},
		{"cancelled with no delay at all", Backoff{Attempts: 10}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.want == context.DeadlineExceeded {
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
			}
			calls := 0
			// An hour's delay not cut short by the context would hang the
			// test (go test's timeout ends it): returning at all, with the
			// context's error after one call, is the proof.
			err := tt.b.Retry(ctx, func(int) (bool, error) {
				calls++
				if tt.want == context.Canceled {
					cancel()
				}
				return true, nil
			})
			if !errors.Is(err, tt.want) || calls != 1 {
				t.Fatalf("err %v after %d calls, want %v after 1", err, calls, tt.want)
			}
		})
	}
}

func TestBackoffDelaysAreBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		b        Backoff
		ceilings []time.Duration // after attempts 1, 2, ...
	}{
		{"doubles up to Max", Backoff{Base: 10 * time.Millisecond, Max: 45 * time.Millisecond},
			[]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 45 * time.Millisecond, 45 * time.Millisecond}},
		{"no Max doubles on", Backoff{Base: time.Millisecond},
			[]time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}},
		{"Max below Base", Backoff{Base: time.Second, Max: time.Millisecond},
			[]time.Duration{time.Millisecond, time.Millisecond}},
		{"zero Base never waits", Backoff{Max: time.Second}, []time.Duration{0, 0, 0}},
	}
	for _, tt := range tests {
		for i, want := range tt.ceilings {
			attempt := i + 1
			if got := tt.b.Ceiling(attempt); got != want {
				t.Errorf("%s: Ceiling(%d) = %v, want %v", tt.name, attempt, got, want)
			}
			for range 200 {
				if d := tt.b.delay(attempt); d < 0 || d > want {
					t.Fatalf("%s: delay(%d) = %v, outside [0, %v]", tt.name, attempt, d, want)
				}
			}
		}
	}
	// Far attempts neither overflow nor go negative.
	for _, huge := range []Backoff{{Base: time.Hour}, {Base: 1 << 40}} {
		for _, attempt := range []int{40, 64, 1000, 1 << 30} {
			if c := huge.Ceiling(attempt); c <= 0 {
				t.Errorf("Base %v: Ceiling(%d) = %v", huge.Base, attempt, c)
			}
		}
	}
	// Full jitter: the delays spread over the range, not all at its top.
	b := Backoff{Base: time.Second}
	short := 0
	for range 200 {
		if b.delay(1) < b.Ceiling(1)/2 {
			short++
		}
	}
	if short == 0 || short == 200 {
		t.Errorf("%d of 200 delays in the lower half", short)
	}
}
