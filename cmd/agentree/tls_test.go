package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentree test"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// TestGatewayServesTLS: `agentree gateway --tls-cert --tls-key` answers
// HTTPS (HTTP/2 offered) with the certificate it was given, refuses plain
// HTTP on that port, and serves gRPC over TLS on --grpc-addr.
func TestGatewayServesTLS(t *testing.T) {
	temporaltest.Address(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	certFile, keyFile, roots := selfSigned(t)
	addr, grpcAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runGateway(ctx, []string{"--addr", addr, "--grpc-addr", grpcAddr, "--tls-cert", certFile, "--tls-key", keyFile})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	tlsConf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, ForceAttemptHTTP2: true}}
	var resp *http.Response
	require.Eventually(t, func() bool {
		var err error
		resp, err = c.Get("https://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 10*time.Millisecond, "the gateway never answered over HTTPS")
	require.NotNil(t, resp.TLS)
	require.Equal(t, "HTTP/2.0", resp.Proto)
	require.Equal(t, "agentree test", resp.TLS.PeerCertificates[0].Subject.CommonName)

	plain, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	plain.Body.Close()
	require.Equal(t, http.StatusBadRequest, plain.StatusCode, "plain HTTP on the TLS port")

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(tlsConf)))
	require.NoError(t, err)
	defer conn.Close()
	_, err = pb.NewAgentServiceClient(conn).ListAgentExecutions(ctx, &pb.ListAgentExecutionsRequest{Org: "any"})
	require.Equal(t, codes.Unauthenticated, status.Code(err), "gRPC over TLS reached the service: %v", err)
}
