package snowfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// NewKey generates a 2048-bit RSA key pair for a test: the public key for
// [Options].PublicKey and the private key as unencrypted PKCS#8 PEM, as
// Snowflake's key-pair setup writes it (openssl genrsa | openssl pkcs8
// -topk8 -nocrypt), for [snowflake.ClientOptions].PrivateKeyPEM or a key
// file.
func NewKey(t testing.TB) (*rsa.PublicKey, []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("snowfake: generate key: %v", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatalf("snowfake: encode key: %v", err)
	}
	return &k.PublicKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
