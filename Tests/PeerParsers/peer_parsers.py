#!/usr/bin/env python3
"""Independent multipart parsers for FormDataKit's tests: every body given is parsed by
Werkzeug, python-multipart, Python's email package, Go's mime/multipart (peer_parse.go, built
once) and PHP (peer_parse.php as the router of `php -S` on a free loopback port), none of which
FormDataKit wrote.

usage: peer_parsers.py < {"cases": [{"id": ID, "body_hex": HEX, "content_type": TYPE}, ...]}
output: {PARSER: {"missing": REASON} or {"results": {ID: RESULT}}}
  RESULT: {"fields": [[name, value]], "files": [[name, filename, size]]} or {"error": TEXT}
"""
import email.parser
import email.policy
import http.client
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def werkzeug_parser():
    try:
        from werkzeug.formparser import parse_form_data
    except ImportError as error:
        return None, f"werkzeug is not installed ({error}; pip install werkzeug)"

    def parse(body, content_type):
        environ = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": content_type, "CONTENT_LENGTH": str(len(body)),
                   "wsgi.input": io.BytesIO(body)}
        _, form, files = parse_form_data(environ, max_form_memory_size=None, max_content_length=None)
        return {"fields": [[k, v] for k, v in form.items(multi=True)],
                "files": [[k, f.filename, len(f.read())] for k, f in files.items(multi=True)]}

    return parse, None


def python_multipart_parser():
    try:
        import python_multipart
    except ImportError as error:
        return None, f"python-multipart is not installed ({error}; pip install python-multipart)"

    def parse(body, content_type):
        fields, files = [], []

        def on_field(field):
            fields.append([field.field_name.decode("utf-8", "replace"), (field.value or b"").decode("utf-8", "replace")])

        def on_file(file):
            file.file_object.seek(0)
            size = len(file.file_object.read())
            name = (file.file_name or b"").decode("utf-8", "replace")
            files.append([file.field_name.decode("utf-8", "replace"), name, size])

        headers = {"Content-Type": content_type.encode(), "Content-Length": str(len(body)).encode()}
        python_multipart.parse_form(headers, io.BytesIO(body), on_field, on_file)
        return {"fields": fields, "files": files}

    return parse, None


def email_parser():
    def parse(body, content_type):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        if message.defects:
            return {"error": "; ".join(type(d).__name__ for d in message.defects)}
        fields, files = [], []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            filename = part.get_filename()
            content = part.get_payload(decode=True) or b""
            if filename is not None:
                files.append([name, filename, len(content)])
            else:
                fields.append([name, content.decode("utf-8", "replace")])
        return {"fields": fields, "files": files}

    return parse, None


def go_parser(workdir):
    go = shutil.which("go")
    if go is None:
        return None, "go is not installed (apt-get install golang-go)"
    binary = os.path.join(workdir, "peer_parse")
    environment = dict(os.environ, GOTOOLCHAIN="local", GO111MODULE="off", GOCACHE=os.path.join(workdir, "gocache"))
    built = subprocess.run([go, "build", "-o", binary, os.path.join(HERE, "peer_parse.go")], capture_output=True,
                           env=environment)
    if built.returncode != 0:
        return None, "go build failed: " + built.stderr.decode(errors="replace")

    def parse(body, content_type):
        path = os.path.join(workdir, "body")
        with open(path, "wb") as file:
            file.write(body)
        run = subprocess.run([binary, path, content_type], capture_output=True, check=True)
        return json.loads(run.stdout)

    return parse, None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def php_parser(workdir, cleanups):
    php = shutil.which("php")
    if php is None:
        return None, "php is not installed (apt-get install php-cli)"
    for _ in range(5):  # another process may take the port between the probe and php's bind
        port = free_port()
        server = subprocess.Popen([php, "-n", "-d", "file_uploads=1", "-d", "max_file_uploads=100",
                                   "-S", f"127.0.0.1:{port}", os.path.join(HERE, "peer_parse.php")],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  cwd=workdir)
        cleanups.append(lambda server=server: (server.terminate(), server.wait()))
        for _ in range(200):
            if server.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.025)
        if server.poll() is None:
            break
    else:
        return None, "php -S did not start: " + server.stderr.read().decode(errors="replace")

    def parse(body, content_type):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/", body=body, headers={"Content-Type": content_type})
        answer = connection.getresponse().read()
        connection.close()
        return json.loads(answer)

    return parse, None


def main():
    request = json.load(sys.stdin)
    workdir = tempfile.mkdtemp(prefix="fdk-peer-parsers-")
    cleanups = []
    try:
        parsers = {
            "werkzeug": werkzeug_parser(),
            "python-multipart": python_multipart_parser(),
            "email": email_parser(),
            "go": go_parser(workdir),
            "php": php_parser(workdir, cleanups),
        }
        output = {}
        for name, (parse, missing) in parsers.items():
            if parse is None:
                output[name] = {"missing": missing}
                continue
            results = {}
            for case in request["cases"]:
                try:
                    results[case["id"]] = parse(bytes.fromhex(case["body_hex"]), case["content_type"])
                except Exception as error:  # a parser that refuses the body: that is a result too
                    results[case["id"]] = {"error": f"{type(error).__name__}: {error}"}
            output[name] = {"results": results}
        json.dump(output, sys.stdout, ensure_ascii=False)
    finally:
        for cleanup in cleanups:
            cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
