import json, sys, http.server, os, itertools
OUT = sys.argv[2]; os.makedirs(OUT, exist_ok=True)
n = itertools.count(1)
def sse(ev, d): return f"event: {ev}\ndata: {json.dumps(d)}\n\n"
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_HEAD(self): self.send_response(200); self.end_headers()
    def do_GET(self): self.send_response(200); self.send_header("Content-Type","application/json"); self.end_headers(); self.wfile.write(b"{}")
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        i = next(n)
        with open(f"{OUT}/{i:02d}{self.path.replace('/','_').split('?')[0]}.json", "wb") as f: f.write(body)
        try: req = json.loads(body)
        except Exception: req = {}
        if "count_tokens" in self.path:
            self.send_response(200); self.send_header("Content-Type","application/json"); self.end_headers()
            self.wfile.write(b'{"input_tokens":100}'); return
        msgs = req.get("messages", [])
        last = msgs[-1] if msgs else {}
        c = last.get("content")
        is_result = isinstance(c, list) and any(b.get("type") == "tool_result" for b in c)
        tools = [t.get("name") for t in req.get("tools", [])]
        u = {"input_tokens": 50, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 0 if i < 3 else 2900, "output_tokens": 1}
        out = [sse("message_start", {"type":"message_start","message":{"id":f"msg_{i}","type":"message","role":"assistant","content":[],"model":req.get("model"),"stop_reason":None,"stop_sequence":None,"usage":u}})]
        idx = 0
        if req.get("thinking", {}).get("type") in ("enabled", "adaptive") and "Bash" in tools:
            out.append(sse("content_block_start", {"type":"content_block_start","index":idx,"content_block":{"type":"thinking","thinking":"","signature":""}}))
            out.append(sse("content_block_delta", {"type":"content_block_delta","index":idx,"delta":{"type":"thinking_delta","thinking":f"Turn {i}: I should act with a tool."}}))
            out.append(sse("content_block_delta", {"type":"content_block_delta","index":idx,"delta":{"type":"signature_delta","signature":f"EqMBCkgIBxABGAIiQRecordedSig{i:02d}"}}))
            out.append(sse("content_block_stop", {"type":"content_block_stop","index":idx})); idx += 1
        rounds = sum(1 for m in msgs if isinstance(m.get("content"), list) and any(b.get("type")=="tool_result" for b in m["content"]))
        if "Bash" in tools and rounds < 2:
            out.append(sse("content_block_start", {"type":"content_block_start","index":idx,"content_block":{"type":"tool_use","id":f"toolu_rec{i:02d}","name":"Bash","input":{}}}))
            args = json.dumps({"command": f"echo step-{rounds+1}", "description": "Print a step"})
            out.append(sse("content_block_delta", {"type":"content_block_delta","index":idx,"delta":{"type":"input_json_delta","partial_json":args}}))
            out.append(sse("content_block_stop", {"type":"content_block_stop","index":idx}))
            stop = "tool_use"
        else:
            out.append(sse("content_block_start", {"type":"content_block_start","index":idx,"content_block":{"type":"text","text":""}}))
            out.append(sse("content_block_delta", {"type":"content_block_delta","index":idx,"delta":{"type":"text_delta","text":"Done: step-1 and step-2 printed." if "Bash" in tools else "Title"}}))
            out.append(sse("content_block_stop", {"type":"content_block_stop","index":idx}))
            stop = "end_turn"
        out.append(sse("message_delta", {"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":None},"usage":{"output_tokens":20}}))
        out.append(sse("message_stop", {"type":"message_stop"}))
        data = "".join(out).encode()
        self.send_response(200); self.send_header("Content-Type","text/event-stream"); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
