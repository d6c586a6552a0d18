module miam

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/tools v0.52.0
)
