package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"lastro/collections/secret"
	"lastro/ops"
)

const rotateUsage = "usage: lastro rotate debtor-keys --tenant T [--wcu N] [--settle D] [flags]\n" +
	"       lastro rotate data-key [--new-key FILE|env:NAME [--new-key-id ID] | --new-kms-key ARN] [--wcu N] [flags]\n"

// rotateCmd: lastro rotate debtor-keys | data-key, the two secrets'
// rotations (docs/adr/0075, docs/adr/0083).
func rotateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "debtor-keys":
			return rotateDebtorKeysCmd(ctx, args, stdout, stderr)
		case "data-key":
			return rotateDataKeyCmd(ctx, args, stdout, stderr)
		}
	}
	fmt.Fprint(stderr, rotateUsage)
	if len(args) > 0 && isHelp(args[0]) {
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown rotate command (debtor-keys, data-key)")
}

// rotateDataKeyCmd: lastro rotate data-key, the data key's re-wrap
// (docs/adr/0083). The new key seals from the start of the run; the
// configured ones stay in the ring to open.
func rotateDataKeyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rotate data-key", "[--new-key FILE|env:NAME [--new-key-id ID] | --new-kms-key ARN] [--wcu N] [flags]", stderr)
	newKey := fs.String("new-key", "", "the new local data key: a file holding it in base64, or env:NAME for an environment variable (empty: the configured keys as they are)")
	newID := fs.String("new-key-id", "", "the new key's id, recorded in what it seals (default: the next vN)")
	newKMS := fs.String("new-kms-key", "", "the new KMS key's ARN for personal data (LASTRO_KMS_KEY_ID's successor)")
	wcu := fs.Float64("wcu", 100, "write capacity units a second the re-seals may spend (0: no limit)")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if *wcu < 0 {
		return fmt.Errorf("--wcu must be 0 or more")
	}
	if *newKey != "" && *newKMS != "" {
		return fmt.Errorf("give --new-key or --new-kms-key, not both: rotate one key at a time")
	}
	if *newKey != "" {
		if cfg, err = withNewDataKey(cfg, *newKey, *newID, os.Getenv); err != nil {
			return err
		}
	}
	if *newKMS != "" {
		if cfg.KMSKeyID == "" {
			return fmt.Errorf("--new-kms-key needs LASTRO_KMS_KEY_ID: personal data are sealed under the local data key here")
		}
		// A message records its KMS key's ARN: an alias or a bare id would
		// never match it (docs/adr/0083).
		if !strings.HasPrefix(*newKMS, "arn:") || !strings.HasPrefix(cfg.KMSKeyID, "arn:") {
			return fmt.Errorf("--new-kms-key and LASTRO_KMS_KEY_ID must be key ARNs (arn:aws:kms:...)")
		}
		if *newKMS != cfg.KMSKeyID {
			cfg.OldKMSKeys = strings.Trim(cfg.KMSKeyID+","+cfg.OldKMSKeys, ",")
			cfg.KMSKeyID = *newKMS
		}
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	named, ok := e.Sealer.(interface{ Current() string })
	if !ok {
		return fmt.Errorf("the personal-data sealer does not name its keys")
	}
	o := ops.RewrapOptions{WCU: *wcu, SecretsKey: cmp.Or(cfg.DataKeyID, secret.LegacyKeyID), PIIKey: named.Current()}
	fmt.Fprintf(stderr, "rotate data-key: sealing under data key %s and personal-data key %s; every engine must already open them (docs/adr/0083)\n", o.SecretsKey, o.PIIKey)
	rep, err := ops.RewrapDataKey(ctx, e.opsDeps(stderr), o)
	return jobDone(ctx, stdout, rep, err)
}

// withNewDataKey makes the key read from src (a file, or env:NAME) the
// configured data key, the previous one moving to the old keys. A key
// that is already the configured one changes nothing. Errors never show
// a key.
func withNewDataKey(cfg config, src, id string, getenv func(string) string) (config, error) {
	var raw string
	if name, ok := strings.CutPrefix(src, "env:"); ok {
		if raw = getenv(name); raw == "" {
			return cfg, fmt.Errorf("--new-key %s: the variable is empty", src)
		}
	} else {
		b, err := os.ReadFile(src)
		if err != nil {
			return cfg, fmt.Errorf("--new-key: %w", err)
		}
		raw = string(b)
	}
	key, err := secret.DecodeKey(raw)
	if err != nil {
		return cfg, fmt.Errorf("--new-key: %w", err)
	}
	dir := cfg.DataDir
	if cfg.inMemory() {
		dir = ""
	}
	cur, _, err := secret.LoadKey(cfg.DataKey, dir)
	if err != nil {
		return cfg, err
	}
	curID := cmp.Or(cfg.DataKeyID, secret.LegacyKeyID)
	if string(cur) == string(key) {
		return cfg, nil
	}
	old, err := secret.ParseKeys(cfg.OldKeys)
	if err != nil {
		return cfg, fmt.Errorf("LASTRO_OLD_DATA_KEYS: %w", err)
	}
	if id == "" {
		id = nextKeyID(append(old, secret.Key{ID: curID}))
	}
	if !secret.ValidKeyID(id) {
		return cfg, fmt.Errorf("--new-key-id must be 1-16 of a-z, 0-9 and -")
	}
	list := []string{curID + ":" + base64.StdEncoding.EncodeToString(cur)}
	for _, k := range old {
		if k.ID == id {
			return cfg, fmt.Errorf("--new-key-id %s is already an old key's id", id)
		}
		list = append(list, k.ID+":"+base64.StdEncoding.EncodeToString(k.Bytes))
	}
	if id == curID {
		return cfg, fmt.Errorf("--new-key-id %s is the current key's id", id)
	}
	cfg.DataKey, cfg.DataKeyID, cfg.OldKeys = base64.StdEncoding.EncodeToString(key), id, strings.Join(list, ",")
	return cfg, nil
}

// nextKeyID is v<n+1> for the highest v<n> among keys.
func nextKeyID(keys []secret.Key) string {
	n := 1
	for _, k := range keys {
		if v, err := strconv.Atoi(strings.TrimPrefix(k.ID, "v")); err == nil && strings.HasPrefix(k.ID, "v") && v > n {
			n = v
		}
	}
	return "v" + strconv.Itoa(n+1)
}
