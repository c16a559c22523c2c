package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// certificateAuthority returns the PEM of the certificate authority in the serving certificate file
// the generic server generated (the serving certificate, then the self-signed authority that signed
// it), or the whole file if it names no authority.
func certificateAuthority(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %v", err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("serving certificate %s: %v", path, err)
	}
	var ca []byte
	for _, c := range certs {
		if c.IsCA {
			ca = append(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
	}
	if ca == nil {
		ca = data
	}
	return ca, nil
}

// waitReady polls url/readyz with the token, trusting only ca, until it answers 200 "ok"; it fails if
// the server stops first or readyTimeout passes.
func waitReady(url string, ca []byte, token string, stopped <-chan error) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("no certificate in the serving certificate authority")
	}
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	deadline := time.Now().Add(readyTimeout)
	last := "no answer"
	for {
		select {
		case err := <-stopped:
			return fmt.Errorf("the server stopped before it was ready: %v", err)
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, url+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
		} else {
			body := make([]byte, 4096)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %q", resp.Status, body[:n])
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/readyz did not answer ok within %s (last: %s)", url, readyTimeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeKubeconfig writes a kubeconfig whose one context reaches url with the token, trusting ca.
func writeKubeconfig(path, url string, ca []byte, token string) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["sample-apiserver"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
	config.AuthInfos["sample-apiserver"] = &clientcmdapi.AuthInfo{Token: token}
	config.Contexts["sample-apiserver"] = &clientcmdapi.Context{Cluster: "sample-apiserver", AuthInfo: "sample-apiserver", Namespace: "default"}
	config.CurrentContext = "sample-apiserver"
	tmp := path + ".partial"
	if err := clientcmd.WriteToFile(*config, tmp); err != nil {
		return fmt.Errorf("kubeconfig: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("kubeconfig: %v", err)
	}
	return nil
}
