// Package pii encrypts personal data (document numbers, names, phones,
// e-mails) on the client before it is stored, with the AWS Encryption SDK:
// a raw AES keyring derived from the service's data key locally, an AWS
// KMS keyring in production. Every message is bound to its owner (tenant
// and partition key) through the encryption context, which is required on
// decrypt and not stored in the message (ADR 0006).
//
// Callers see a narrow Sealer; which keyring sits behind it is decided once
// at wiring time.
package pii

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	mpl "github.com/aws/aws-cryptographic-material-providers-library/releases/go/mpl/awscryptographymaterialproviderssmithygenerated"
	mpltypes "github.com/aws/aws-cryptographic-material-providers-library/releases/go/mpl/awscryptographymaterialproviderssmithygeneratedtypes"
	esdk "github.com/aws/aws-encryption-sdk/releases/go/encryption-sdk/awscryptographyencryptionsdksmithygenerated"
	esdktypes "github.com/aws/aws-encryption-sdk/releases/go/encryption-sdk/awscryptographyencryptionsdksmithygeneratedtypes"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// Owner is whom a ciphertext belongs to; it becomes the encryption
// context, so a ciphertext copied to another tenant or debtor won't open.
// It holds no personal data.
type Owner struct {
	Tenant    string
	Partition string
}

func (o Owner) context() map[string]string {
	return map[string]string{"tenant": o.Tenant, "pk": o.Partition}
}

// Sealer encrypts and decrypts personal data bound to an owner.
type Sealer interface {
	Seal(ctx context.Context, plaintext []byte, owner Owner) ([]byte, error)
	Open(ctx context.Context, ciphertext []byte, owner Owner) ([]byte, error)
	// Keyring names the keyring in use ("raw-aes" or "aws-kms"), for logs.
	Keyring() string
}

// Suite is the algorithm suite: AES-256-GCM with HKDF-SHA512 and key
// commitment, without an ECDSA signature — the signature adds ~200 bytes to
// every message and protects against a reader who can also encrypt, which
// the engine's single trust domain doesn't have (ADR 0006).
const Suite = mpltypes.ESDKAlgorithmSuiteIdAlgAes256GcmHkdfSha512CommitKey

// ErrOpen means a ciphertext is corrupt, was bound to another owner or
// was sealed under another key.
var ErrOpen = errors.New("pii: cannot decrypt personal data")

// ESDK is the Encryption SDK sealer. It seals under one key (the current
// one) and opens under a ring of keys: after a rotation the old keys stay
// for decryption until no message is wrapped under them (docs/adr/0083).
type ESDK struct {
	client  *esdk.Client
	cmm     mpltypes.ICryptographicMaterialsManager // seals: the current key only
	open    mpltypes.ICryptographicMaterialsManager // opens: every key of the ring
	keyring string
	current string       // the id of the key that seals: a local key id, or a KMS key
	raw     []*rawOpener // the raw AES keyrings' messages, opened natively; nil for KMS
	// sdk serialises the SDK's calls under the raw AES keyring (nil for
	// KMS, whose calls are not serialised): that keyring writes shared
	// state on every wrap and unwrap (a lazily set flag of the Dafny
	// runtime, seen by the race detector), so two at once race. A pointer,
	// so a copy of the sealer shares the keyring's lock.
	sdk *sync.Mutex
}

// LocalKeyInfo is the HKDF info that derives the personal-data wrapping
// key from the data key; changing it orphans every stored profile.
const LocalKeyInfo = "lastro/pii/raw-aes/v1"

// The raw AES keyring's namespace, in every message it wraps a data key
// for, with the key name localKeyPrefix + the key's id: "pii-v1" for the
// data key of a deployment that never rotated.
const (
	localNamespace = "lastro"
	localKeyPrefix = "pii-"
)

// LegacyKeyID is the id of the local data key before any rotation.
const LegacyKeyID = "v1"

// LocalKey is a data key of the local ring and its id (recorded in every
// message as the wrapping key's name).
type LocalKey struct {
	ID      string
	DataKey []byte
}

// DeriveKey derives the 32-byte raw AES wrapping key from the data key,
// so the key that seals tenant secrets never wraps personal data itself.
func DeriveKey(dataKey []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, dataKey, nil, LocalKeyInfo, 32)
}

// NewLocal returns a sealer with a raw AES-256-GCM keyring whose wrapping
// key is derived from dataKey, the legacy key.
func NewLocal(ctx context.Context, dataKey []byte) (*ESDK, error) {
	return NewLocalRing(ctx, LocalKey{ID: LegacyKeyID, DataKey: dataKey})
}

// NewLocalRing returns a sealer that seals under current's raw AES keyring
// and opens under it and every old key's.
func NewLocalRing(ctx context.Context, current LocalKey, old ...LocalKey) (*ESDK, error) {
	m, err := mpl.NewClient(mpltypes.MaterialProvidersConfig{})
	if err != nil {
		return nil, fmt.Errorf("pii: material providers: %w", err)
	}
	var rings []mpltypes.IKeyring
	var raws []*rawOpener
	for _, k := range append([]LocalKey{current}, old...) {
		if len(k.DataKey) < 32 {
			return nil, fmt.Errorf("pii: data key %s must be at least 32 bytes", k.ID)
		}
		wrapping, err := DeriveKey(k.DataKey)
		if err != nil {
			return nil, fmt.Errorf("pii: derive key: %w", err)
		}
		kr, err := m.CreateRawAesKeyring(ctx, mpltypes.CreateRawAesKeyringInput{
			KeyNamespace: localNamespace, KeyName: localKeyPrefix + k.ID, WrappingKey: wrapping,
			WrappingAlg: mpltypes.AesWrappingAlgAlgAes256GcmIv12Tag16,
		})
		if err != nil {
			return nil, fmt.Errorf("pii: raw AES keyring: %w", err)
		}
		o, err := newRawOpener(localNamespace, localKeyPrefix+k.ID, wrapping)
		if err != nil {
			return nil, fmt.Errorf("pii: raw AES opener: %w", err)
		}
		rings, raws = append(rings, kr), append(raws, o)
	}
	s, err := newESDK(ctx, m, rings, "raw-aes")
	if err != nil {
		return nil, err
	}
	s.sdk = new(sync.Mutex)
	s.raw, s.current = raws, current.ID
	return s, nil
}

// NewKMS returns a sealer with an AWS KMS keyring on keyID: every message
// gets a fresh data key from KMS, and KMS sees the encryption context
// (tenant and partition key) in its audit trail.
func NewKMS(ctx context.Context, keyID string, client *kms.Client) (*ESDK, error) {
	return NewKMSRing(ctx, keyID, nil, client)
}

// NewKMSRing returns a KMS sealer that seals under keyID and opens under
// it and every old key (ARNs: a message records the key's ARN).
func NewKMSRing(ctx context.Context, keyID string, old []string, client *kms.Client) (*ESDK, error) {
	m, err := mpl.NewClient(mpltypes.MaterialProvidersConfig{})
	if err != nil {
		return nil, fmt.Errorf("pii: material providers: %w", err)
	}
	var rings []mpltypes.IKeyring
	for _, id := range append([]string{keyID}, old...) {
		kr, err := m.CreateAwsKmsKeyring(ctx, mpltypes.CreateAwsKmsKeyringInput{KmsClient: client, KmsKeyId: id})
		if err != nil {
			return nil, fmt.Errorf("pii: KMS keyring: %w", err)
		}
		rings = append(rings, kr)
	}
	s, err := newESDK(ctx, m, rings, "aws-kms")
	if err != nil {
		return nil, err
	}
	s.current = keyID
	return s, nil
}

// newESDK builds the sealer over rings: the first seals, all of them
// (a multi-keyring) open.
func newESDK(ctx context.Context, m *mpl.Client, rings []mpltypes.IKeyring, name string) (*ESDK, error) {
	cmm, err := requiredContextCMM(ctx, m, rings[0])
	if err != nil {
		return nil, err
	}
	open := cmm
	if len(rings) > 1 {
		multi, err := m.CreateMultiKeyring(ctx, mpltypes.CreateMultiKeyringInput{Generator: rings[0], ChildKeyrings: rings[1:]})
		if err != nil {
			return nil, fmt.Errorf("pii: multi-keyring: %w", err)
		}
		if open, err = requiredContextCMM(ctx, m, multi); err != nil {
			return nil, err
		}
	}
	policy := mpltypes.ESDKCommitmentPolicyRequireEncryptRequireDecrypt
	c, err := esdk.NewClient(esdktypes.AwsEncryptionSdkConfig{CommitmentPolicy: &policy})
	if err != nil {
		return nil, fmt.Errorf("pii: encryption SDK: %w", err)
	}
	return &ESDK{client: c, cmm: cmm, open: open, keyring: name}, nil
}

func requiredContextCMM(ctx context.Context, m *mpl.Client, kr mpltypes.IKeyring) (mpltypes.ICryptographicMaterialsManager, error) {
	base, err := m.CreateDefaultCryptographicMaterialsManager(ctx, mpltypes.CreateDefaultCryptographicMaterialsManagerInput{Keyring: kr})
	if err != nil {
		return nil, fmt.Errorf("pii: materials manager: %w", err)
	}
	// The owner is required on decrypt and left out of the message: it is
	// known from the item's key, and storing it would only add bytes.
	cmm, err := m.CreateRequiredEncryptionContextCMM(ctx, mpltypes.CreateRequiredEncryptionContextCMMInput{
		UnderlyingCMM: base, RequiredEncryptionContextKeys: []string{"tenant", "pk"},
	})
	if err != nil {
		return nil, fmt.Errorf("pii: required-context materials manager: %w", err)
	}
	return cmm, nil
}

// Current is the id of the key that seals: a local key id, or the KMS
// key as configured.
func (s *ESDK) Current() string { return s.current }

// KeyOf names the key a message's data key is wrapped under, read from
// its header without opening it: a local key id, or a KMS key's ARN; ""
// when the message is not one this package seals.
func (s *ESDK) KeyOf(ciphertext []byte) string {
	provider, info, ok := wrappingKey(ciphertext)
	switch {
	case !ok:
		return ""
	case provider == localNamespace:
		// Raw AES provider info: the key name, the tag length and the IV
		// length (4 bytes each), then the IV.
		if len(info) < 8+ivLen {
			return ""
		}
		name := string(info[:len(info)-8-ivLen])
		id, ok := strings.CutPrefix(name, localKeyPrefix)
		if !ok {
			return ""
		}
		return id
	default:
		return string(info)
	}
}

// Keyring names the keyring.
func (s *ESDK) Keyring() string { return s.keyring }

// Seal encrypts plaintext for owner.
func (s *ESDK) Seal(ctx context.Context, plaintext []byte, owner Owner) ([]byte, error) {
	if owner.Tenant == "" || owner.Partition == "" {
		return nil, errors.New("pii: seal needs an owner")
	}
	suite := Suite
	if s.sdk != nil {
		s.sdk.Lock()
		defer s.sdk.Unlock()
	}
	out, err := s.client.Encrypt(ctx, esdktypes.EncryptInput{
		Plaintext: plaintext, EncryptionContext: owner.context(), MaterialsManager: s.cmm, AlgorithmSuiteId: &suite,
	})
	if err != nil {
		// The SDK's message never holds the plaintext; keep it anyway
		// out of the error, which may be logged.
		return nil, fmt.Errorf("pii: encrypt with %s keyring failed", s.keyring)
	}
	return out.Ciphertext, nil
}

// Open decrypts a ciphertext sealed for owner. Under the raw AES keyring
// the messages it seals are opened natively first (ADR 0033); anything
// that path does not open is the SDK's to decide.
func (s *ESDK) Open(ctx context.Context, ciphertext []byte, owner Owner) ([]byte, error) {
	if len(ciphertext) == 0 {
		return nil, ErrOpen // the SDK panics on an empty message
	}
	// Each opener recognises only messages wrapped under its own key's
	// name, so this tries the key the message records.
	for _, o := range s.raw {
		if p, err := o.open(ciphertext, owner.context()); err == nil {
			return p, nil
		}
	}
	if s.sdk != nil {
		s.sdk.Lock()
		defer s.sdk.Unlock()
	}
	out, err := s.client.Decrypt(ctx, esdktypes.DecryptInput{
		Ciphertext: ciphertext, EncryptionContext: owner.context(), MaterialsManager: s.open,
	})
	if err != nil {
		return nil, ErrOpen
	}
	if out.AlgorithmSuiteId != Suite {
		return nil, ErrOpen
	}
	return out.Plaintext, nil
}
