// Independent parser for FormDataKit's tests: Go's mime/multipart, read the way net/http's
// ParseMultipartForm reads a form (a part with a non-empty FileName() is a file).
//
// usage: peer_parse BODY_FILE CONTENT_TYPE
// output: {"fields": [[name, value]], "files": [[name, filename, size]]} or {"error": "..."}
package main

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"os"
)

func fail(err error) {
	json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
	os.Exit(0)
}

func main() {
	body, err := os.Open(os.Args[1])
	if err != nil {
		fail(err)
	}
	_, params, err := mime.ParseMediaType(os.Args[2])
	if err != nil {
		fail(err)
	}
	reader := multipart.NewReader(body, params["boundary"])
	fields := [][]string{}
	files := [][]interface{}{}
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(err)
		}
		content, err := io.ReadAll(part)
		if err != nil {
			fail(err)
		}
		if part.FileName() != "" {
			files = append(files, []interface{}{part.FormName(), part.FileName(), len(content)})
		} else {
			fields = append(fields, []string{part.FormName(), string(content)})
		}
	}
	json.NewEncoder(os.Stdout).Encode(map[string]interface{}{"fields": fields, "files": files})
}
