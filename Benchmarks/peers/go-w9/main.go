// The Go side of formdata-bench's W9 (small forms over TLS to one origin, HTTP/2 or HTTP/1.1).
//
//	go-w9 serve h2|h1 DIR          a TLS receiver on 127.0.0.1: writes DIR/cert.pem (a fresh
//	                               self-signed certificate for 127.0.0.1), prints "PORT <n>",
//	                               reads every body and answers 200. Each line on stdin is
//	                               answered on stdout: "reset" zeroes the counters ("ok"),
//	                               "stats" prints "<requests> <smallest body> <all body bytes>
//	                               <connections> <requests over h2>". It ends when stdin closes.
//	                               h1: no ALPN h2.
//	go-w9 send h2|h1 COUNT IN_FLIGHT URL FILE CERT
//	                               the peer client: W7's form (mime/multipart, a body per
//	                               request) COUNT times, IN_FLIGHT at once, trusting CERT.
package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func certificate(dir string) tls.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	template := x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, _ := x509.MarshalECPrivateKey(key)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o644); err != nil {
		panic(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		panic(err)
	}
	return pair
}

func serve(mode, dir string) {
	var requests, smallest, total, connections, overH2 atomic.Int64
	var lock sync.Mutex
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		lock.Lock()
		if requests.Load() == 0 || n < smallest.Load() {
			smallest.Store(n)
		}
		requests.Add(1)
		total.Add(n)
		if r.ProtoMajor == 2 {
			overH2.Add(1)
		}
		lock.Unlock()
		w.Write([]byte("ok"))
	})
	config := &tls.Config{Certificates: []tls.Certificate{certificate(dir)}, NextProtos: []string{"h2", "http/1.1"}}
	server := &http.Server{Handler: handler, TLSConfig: config, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			connections.Add(1)
		}
	}}
	if mode == "h1" {
		config.NextProtos = []string{"http/1.1"}
		server.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go server.ServeTLS(listener, "", "")
	fmt.Printf("PORT %d\n", listener.Addr().(*net.TCPAddr).Port)
	input := bufio.NewScanner(os.Stdin)
	for input.Scan() {
		switch input.Text() {
		case "reset":
			lock.Lock()
			requests.Store(0)
			smallest.Store(0)
			total.Store(0)
			connections.Store(0)
			overH2.Store(0)
			lock.Unlock()
			fmt.Println("ok")
		case "stats":
			lock.Lock()
			fmt.Printf("%d %d %d %d %d\n", requests.Load(), smallest.Load(), total.Load(), connections.Load(), overH2.Load())
			lock.Unlock()
		}
	}
}

func form(file string) (*bytes.Buffer, string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	var body bytes.Buffer
	writer := multipart.NewWriter(&body)
	for _, field := range [][2]string{{"name", "a small form"}, {"note", "three fields and a file"}, {"index", "7"}} {
		if err := writer.WriteField(field[0], field[1]); err != nil {
			return nil, "", err
		}
	}
	part, err := writer.CreateFormFile("file", filepath.Base(file))
	if err != nil {
		return nil, "", err
	}
	part.Write(data)
	writer.Close()
	return &body, writer.FormDataContentType(), nil
}

func send(mode string, count, inFlight int, url, file, cert string) {
	pool := x509.NewCertPool()
	pemBytes, err := os.ReadFile(cert)
	if err != nil || !pool.AppendCertsFromPEM(pemBytes) {
		fmt.Fprintln(os.Stderr, "go-w9: cannot read", cert)
		os.Exit(1)
	}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: mode == "h2",
		MaxIdleConns: inFlight, MaxIdleConnsPerHost: inFlight,
	}
	if mode == "h1" {
		transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	client := &http.Client{Transport: transport}
	jobs := make(chan int, count)
	for index := 0; index < count; index++ {
		jobs <- index
	}
	close(jobs)
	var failed atomic.Int64
	var workers sync.WaitGroup
	for worker := 0; worker < inFlight; worker++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for range jobs {
				body, contentType, err := form(file)
				if err == nil {
					var request *http.Request
					request, err = http.NewRequest("POST", url, body)
					if err == nil {
						request.Header.Set("Content-Type", contentType)
						var response *http.Response
						response, err = client.Do(request)
						if err == nil {
							io.Copy(io.Discard, response.Body)
							response.Body.Close()
							if response.StatusCode != 200 || (mode == "h2") != (response.ProtoMajor == 2) {
								err = fmt.Errorf("status %d over %s", response.StatusCode, response.Proto)
							}
						}
					}
				}
				if err != nil && failed.Add(1) == 1 {
					fmt.Fprintln(os.Stderr, "go-w9:", err)
				}
			}
		}()
	}
	workers.Wait()
	if n := failed.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "go-w9: %d of %d failed\n", n, count)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "serve" {
		serve(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) == 8 && os.Args[1] == "send" {
		count, _ := strconv.Atoi(os.Args[3])
		inFlight, _ := strconv.Atoi(os.Args[4])
		send(os.Args[2], count, inFlight, os.Args[5], os.Args[6], os.Args[7])
		return
	}
	fmt.Fprintln(os.Stderr, "usage: go-w9 serve h2|h1 DIR | go-w9 send h2|h1 COUNT IN_FLIGHT URL FILE CERT")
	os.Exit(2)
}
