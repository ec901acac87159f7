package agenttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// WebConfig writes, into dir, the web configuration the docs recommend for
// --listen (TLS with a certificate for 127.0.0.1, basic auth for user
// "prometheus") and the health check's password file for it.
func WebConfig(dir string) (webConfig, authFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("web config: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "heatsink-agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", fmt.Errorf("web config: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("web config: %w", err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		return "", "", fmt.Errorf("web config: %w", err)
	}
	certFile, keyFile := filepath.Join(dir, "agent.pem"), filepath.Join(dir, "agent-key.pem")
	webConfig, authFile = filepath.Join(dir, "web.yml"), filepath.Join(dir, "agent.auth")
	for path, body := range map[string][]byte{
		certFile:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyFile:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
		webConfig: []byte("tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"),
		authFile:  []byte("prometheus:s3cret\n"),
	} {
		if err := os.WriteFile(path, body, 0o600); err != nil {
			return "", "", fmt.Errorf("web config: %w", err)
		}
	}
	return webConfig, authFile, nil
}
