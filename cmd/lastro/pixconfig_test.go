package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestPixListenerAndReconcileSettings: the mutual-TLS webhook listener
// needs its address, certificate and key together; the reconcile
// interval is a duration of at least a second, or off.
func TestPixListenerAndReconcileSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(config) bool
	}{
		{"defaults", nil, "", func(c config) bool { return c.PSPWebhookTLSAddr == "" && c.PixReconcileEvery == 10*time.Minute }},
		{"the listener whole", map[string]string{"LASTRO_PSP_WEBHOOK_TLS_ADDR": "127.0.0.1:8443", "LASTRO_PSP_WEBHOOK_TLS_CERT": "c.pem",
			"LASTRO_PSP_WEBHOOK_TLS_KEY": "k.pem"}, "", func(c config) bool {
			return c.PSPWebhookTLSAddr == "127.0.0.1:8443" && c.PSPWebhookTLSCert == "c.pem" && c.PSPWebhookTLSKey == "k.pem"
		}},
		{"an address without its certificate", map[string]string{"LASTRO_PSP_WEBHOOK_TLS_ADDR": "127.0.0.1:8443"}, "go together", nil},
		{"a certificate without an address", map[string]string{"LASTRO_PSP_WEBHOOK_TLS_CERT": "c.pem", "LASTRO_PSP_WEBHOOK_TLS_KEY": "k.pem"}, "go together", nil},
		{"reconcile off", map[string]string{"LASTRO_PIX_RECONCILE_EVERY": "off"}, "", func(c config) bool { return c.PixReconcileEvery == 0 }},
		{"reconcile every 5m", map[string]string{"LASTRO_PIX_RECONCILE_EVERY": "5m"}, "", func(c config) bool { return c.PixReconcileEvery == 5*time.Minute }},
		{"reconcile too often", map[string]string{"LASTRO_PIX_RECONCILE_EVERY": "10ms"}, "LASTRO_PIX_RECONCILE_EVERY", nil},
		{"reconcile not a duration", map[string]string{"LASTRO_PIX_RECONCILE_EVERY": "often"}, "LASTRO_PIX_RECONCILE_EVERY", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := loadConfig(newFlagSet("serve", "", io.Discard), nil, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg) {
				t.Fatalf("config %+v, %v", cfg, err)
			}
		})
	}
}
