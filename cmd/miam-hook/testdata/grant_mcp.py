"""A stdio MCP server with one tool, approve, for --permission-prompt-tool:
it plays the user answering yes to every permission prompt of a headless
Claude Code, and appends each prompt's tool_name and input to the file named
by its first argument, one JSON line each."""
import json
import sys

log = sys.argv[1]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    req = json.loads(line)
    method, rid = req.get("method"), req.get("id")
    if rid is None:
        continue  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": req["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "grant", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{
            "name": "approve",
            "description": "Answers a permission prompt.",
            "inputSchema": {
                "type": "object",
                "properties": {"tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}},
                "required": ["tool_name", "input"],
            },
        }]}
    elif method == "tools/call":
        args = req["params"].get("arguments", {})
        with open(log, "a") as f:
            f.write(json.dumps({"tool_name": args.get("tool_name"), "tool_input": args.get("input")}) + "\n")
        answer = {"behavior": "allow", "updatedInput": args.get("input", {})}
        result = {"content": [{"type": "text", "text": json.dumps(answer)}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": rid, "result": result})
