// Receiver for FormDataKit's streamed-part tests: Go's net/http server and mime/multipart.
//
// usage: go run stream_server.go -> binds 127.0.0.1 on a free port, prints "PORT <n>", serves
// until stdin closes. POST /upload answers JSON {"te": [...], "cl": n (-1: none),
// "fields": [[name, value]], "files": [[name, filename, content_type, size, sha256]]}.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

func upload(w http.ResponseWriter, r *http.Request) {
	reader, err := r.MultipartReader()
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	fields := [][]string{}
	files := [][]string{}
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		hash := sha256.New()
		size, err := io.Copy(hash, part)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if part.FileName() == "" {
			// Only small text fields in these tests: read again is not possible, so keep the hash.
			fields = append(fields, []string{part.FormName(), hex.EncodeToString(hash.Sum(nil))})
			continue
		}
		files = append(files, []string{part.FormName(), part.FileName(), part.Header.Get("Content-Type"),
			strconv.FormatInt(size, 10), hex.EncodeToString(hash.Sum(nil))})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"te": r.TransferEncoding, "cl": r.ContentLength, "fields": fields, "files": files})
}

func main() {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Printf("PORT %d\n", listener.Addr().(*net.TCPAddr).Port)
	http.HandleFunc("/upload", upload)
	go http.Serve(listener, nil)
	io.Copy(io.Discard, os.Stdin)
}
