<?php
// Independent parser for FormDataKit's tests: PHP's own multipart parser (what fills $_POST and
// $_FILES), run as the router of `php -S`. Answers every POST with what PHP found, as JSON:
// {"fields": [[name, value]], "files": [[name, filename, size]]}.
// Nested names (a[b]) are flattened back to PHP's top-level key: what a PHP script would index.
header('Content-Type: application/json');
$fields = [];
foreach ($_POST as $name => $value) {
    $fields[] = [(string)$name, is_array($value) ? json_encode($value) : (string)$value];
}
$files = [];
foreach ($_FILES as $name => $file) {
    if (is_array($file['name'])) {
        $files[] = [(string)$name, json_encode($file['name']), -1];
    } else {
        $files[] = [(string)$name, (string)$file['name'], (int)$file['size']];
    }
}
echo json_encode(['fields' => $fields, 'files' => $files], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES);
