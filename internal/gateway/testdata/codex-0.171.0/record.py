import json, sys, http.server, os, itertools
OUT = sys.argv[2]; os.makedirs(OUT, exist_ok=True)
n = itertools.count(1)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        b = b'{"object":"list","data":[]}'
        self.send_response(200); self.send_header("Content-Type","application/json"); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        i = next(n)
        with open(f"{OUT}/{i:02d}{self.path.replace('/','_').split('?')[0]}.json", "wb") as f: f.write(body)
        req = json.loads(body)
        outs = sum(1 for it in req.get("input", []) if it.get("type") == "function_call_output")
        seq = itertools.count(0)
        ev = []
        def e(t, d): d = dict(d, type=t, sequence_number=next(seq)); ev.append(f"event: {t}\ndata: {json.dumps(d)}\n\n")
        rid = f"resp_rec{i:02d}"
        base = {"id": rid, "object": "response", "created_at": 1764990000, "status": "in_progress", "model": req.get("model"), "output": []}
        e("response.created", {"response": base})
        items = []
        rs = {"id": f"rs_rec{i:02d}", "type": "reasoning", "summary": [], "encrypted_content": f"gAAAAABrecorded-codex-{i:02d}"}
        e("response.output_item.added", {"output_index": 0, "item": dict(rs, encrypted_content=None)})
        e("response.output_item.done", {"output_index": 0, "item": rs}); items.append(rs)
        if outs < 2:
            fc = {"id": f"fc_rec{i:02d}", "type": "function_call", "status": "completed", "call_id": f"call_rec{i:02d}", "name": "exec_command",
                  "arguments": json.dumps({"cmd": f"echo step-{outs+1}", "yield_time_ms": 1000})}
            e("response.output_item.added", {"output_index": 1, "item": dict(fc, arguments="", status="in_progress")})
            e("response.function_call_arguments.done", {"output_index": 1, "item_id": fc["id"], "arguments": fc["arguments"]})
            e("response.output_item.done", {"output_index": 1, "item": fc}); items.append(fc)
        else:
            msg = {"id": f"msg_rec{i:02d}", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Done: step-1 and step-2 printed.", "annotations": []}]}
            e("response.output_item.added", {"output_index": 1, "item": dict(msg, content=[], status="in_progress")})
            e("response.output_text.delta", {"output_index": 1, "item_id": msg["id"], "content_index": 0, "delta": "Done: step-1 and step-2 printed."})
            e("response.output_item.done", {"output_index": 1, "item": msg}); items.append(msg)
        usage = {"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 0 if i == 1 else 8960}, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 9040}
        e("response.completed", {"response": dict(base, status="completed", output=items, usage=usage)})
        data = "".join(ev).encode()
        self.send_response(200); self.send_header("Content-Type","text/event-stream"); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
