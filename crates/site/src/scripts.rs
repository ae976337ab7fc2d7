//! The standalone scripts of an SDK page: the reproducer's bytes served by a local HTTP
//! server, the SDK pointed at it, and what the SDK hands over printed, with no toolcert in
//! between. One template per dialect and SDK language; the language is read from the
//! report's subject command (`.py` is Python, `.mjs` Node), the client from the adapter it
//! runs.

/// What a script is made from.
pub struct Reproducer<'a> {
    /// The report's subject command (`exec:… examples/sdks/node/openai-chat.mjs --policy …`).
    pub subject: &'a str,
    /// `openai-chat`, `openai-responses`, `anthropic`, `bedrock`.
    pub dialect: &'a str,
    /// The tools the turn offers, by name.
    pub tools: &'a [String],
    /// The exact bytes fed (one stream).
    pub bytes: &'a [u8],
}

/// The language and the script, or the sentence that says why there is none.
pub fn script(r: &Reproducer) -> Result<(&'static str, String), String> {
    let words: Vec<&str> = r.subject.split_whitespace().collect();
    let has = |end: &str| words.iter().any(|w| w.ends_with(end));
    let adapter = |name: &str| words.iter().any(|w| w.rsplit('/').next() == Some(name));
    if r.dialect == "bedrock" {
        return Err(
            "No script: Bedrock's stream is binary event-stream framing signed per message, which a \
                    ten-line server cannot stand in for; replay it with the command above."
                .into(),
        );
    }
    if has(".py") {
        let client = if adapter("litellm_sdk.py") {
            py_litellm()
        } else if adapter("langchain_openai_sdk.py") {
            py_langchain()
        } else if adapter("openai_chat.py") || adapter("openai_responses.py") || adapter("anthropic_sdk.py") {
            match r.dialect {
                "openai-chat" => py_openai_chat(),
                "openai-responses" => py_openai_responses(),
                "anthropic" => py_anthropic(),
                d => return Err(format!("No script: no Python template for the {d} dialect.")),
            }
        } else {
            let name = words.iter().rev().find(|w| w.ends_with(".py")).copied().unwrap_or("?");
            return Err(format!(
                "No script: there is no standalone template for this SDK's adapter ({name}) yet, only for the \
                 OpenAI, Anthropic, LiteLLM and LangChain clients; replay it with the command above."
            ));
        };
        return Ok(("Python", python(r, client)));
    }
    if has(".mjs") {
        let client = if adapter("vercel-ai.mjs") {
            node_vercel(r.dialect)
        } else {
            match r.dialect {
                "openai-chat" => node_openai_chat(),
                "openai-responses" => node_openai_responses(),
                "anthropic" => node_anthropic(),
                d => return Err(format!("No script: no Node template for the {d} dialect.")),
            }
        };
        return Ok(("Node (ES module, save as .mjs)", node(r, &client)));
    }
    Err("No script: this subject is neither a Python (.py) nor a Node (.mjs) adapter; replay it with the \
         command above, which runs the SDK itself."
        .into())
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Base64 in lines of 76, as a string literal spread over lines in either language.
fn b64_lines(bytes: &[u8], indent: &str) -> String {
    let b = base64(bytes);
    let lines: Vec<String> =
        b.as_bytes().chunks(76).map(|c| format!("{indent}\"{}\"", String::from_utf8_lossy(c))).collect();
    if lines.is_empty() {
        format!("{indent}\"\"")
    } else {
        lines.join("\n")
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn python(r: &Reproducer, client: &str) -> String {
    let tools: Vec<String> = r.tools.iter().map(|t| json_str(t)).collect();
    format!(
        r#"# Serves the reproducer's exact bytes on a local HTTP server, points the SDK at it and
# prints what the SDK hands over. Needs only the SDK (pip install it); no toolcert.
import base64, http.server, json, threading

BODY = base64.b64decode(
{body}
)
TOOLS = [{tools}]

class Provider(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{{server.server_address[1]}}"
MESSAGES = [{{"role": "user", "content": "go"}}]

try:
{client}except Exception as e:  # a loud failure is what some bugs look like
    print("the SDK raised:", type(e).__name__, e)
finally:
    server.shutdown()
"#,
        body = b64_lines(r.bytes, "    "),
        tools = tools.join(", "),
    )
}

fn py_openai_chat() -> &'static str {
    r#"    from openai import OpenAI
    client = OpenAI(base_url=BASE + "/v1", api_key="unused", max_retries=0)
    tools = [{"type": "function", "function": {"name": t, "parameters": {"type": "object"}}} for t in TOOLS]
    with client.chat.completions.stream(model="m", messages=MESSAGES, tools=tools) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    print("finish_reason:", choice.finish_reason)
    for call in choice.message.tool_calls or []:
        print("call", call.id, call.function.name, call.function.arguments)
"#
}

fn py_openai_responses() -> &'static str {
    r#"    from openai import OpenAI
    client = OpenAI(base_url=BASE + "/v1", api_key="unused", max_retries=0)
    tools = [{"type": "function", "name": t, "parameters": {"type": "object"}} for t in TOOLS]
    with client.responses.stream(model="m", input="go", tools=tools) as stream:
        final = stream.get_final_response()
    print("status:", final.status)
    for item in final.output:
        if item.type == "function_call":
            print("call", item.call_id, item.name, item.arguments, item.status)
"#
}

fn py_anthropic() -> &'static str {
    r#"    from anthropic import Anthropic
    client = Anthropic(base_url=BASE, api_key="unused", max_retries=0)
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in TOOLS]
    with client.messages.stream(model="m", max_tokens=1024, messages=MESSAGES, tools=tools) as stream:
        final = stream.get_final_message()
    print("stop_reason:", final.stop_reason)
    for block in final.content:
        if block.type == "tool_use":
            print("call", block.id, block.name, json.dumps(block.input))
"#
}

fn py_litellm() -> &'static str {
    r#"    import litellm
    tools = [{"type": "function", "function": {"name": t, "parameters": {"type": "object"}}} for t in TOOLS]
    chunks = list(litellm.completion(model="openai/m", api_base=BASE + "/v1", api_key="unused",
                                     messages=MESSAGES, tools=tools, stream=True))
    final = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    choice = final.choices[0]
    print("finish_reason:", choice.finish_reason)
    for call in choice.message.tool_calls or []:
        print("call", call.id, call.function.name, call.function.arguments)
"#
}

fn py_langchain() -> &'static str {
    r#"    from langchain_openai import ChatOpenAI
    tools = [{"type": "function", "function": {"name": t, "parameters": {"type": "object"}}} for t in TOOLS]
    llm = ChatOpenAI(model="m", base_url=BASE + "/v1", api_key="unused", max_retries=0).bind_tools(tools)
    message = None
    for chunk in llm.stream("go"):
        message = chunk if message is None else message + chunk
    print("finish_reason:", message.response_metadata.get("finish_reason"))
    for call in message.tool_calls:
        print("call", call["id"], call["name"], json.dumps(call["args"]))
    for call in message.invalid_tool_calls:
        print("invalid call", call["id"], call["name"], call["args"], call["error"])
"#
}

fn node(r: &Reproducer, client: &str) -> String {
    let tools: Vec<String> = r.tools.iter().map(|t| json_str(t)).collect();
    format!(
        r#"// Serves the reproducer's exact bytes on a local HTTP server, points the SDK at it and
// prints what the SDK hands over. Needs only the SDK (npm install it); no toolcert.
import http from "node:http";

const BODY = Buffer.from(
{body},
  "base64");
const TOOLS = [{tools}];

const server = http.createServer((req, res) => {{
  req.resume();
  req.on("end", () => {{
    res.writeHead(200, {{ "content-type": "text/event-stream", "content-length": BODY.length }});
    res.end(BODY);
  }});
}});
await new Promise((ready) => server.listen(0, "127.0.0.1", ready));
const BASE = `http://127.0.0.1:${{server.address().port}}`;

try {{
{client}}} catch (e) {{ // a loud failure is what some bugs look like
  console.log("the SDK raised:", e?.name, e?.message ?? e);
}} finally {{
  server.close();
}}
"#,
        body = b64_lines(r.bytes, "  ").replace("\"\n  \"", "\" +\n  \""),
        tools = tools.join(", "),
    )
}

fn node_openai_chat() -> String {
    r#"  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: BASE + "/v1", apiKey: "unused", maxRetries: 0 });
  const tools = TOOLS.map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } }));
  const stream = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "go" }], tools });
  const final = await stream.finalChatCompletion();
  const choice = final.choices[0];
  console.log("finish_reason:", choice.finish_reason);
  for (const call of choice.message.tool_calls ?? []) console.log("call", call.id, call.function?.name, call.function?.arguments);
"#
    .into()
}

fn node_openai_responses() -> String {
    r#"  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: BASE + "/v1", apiKey: "unused", maxRetries: 0 });
  const tools = TOOLS.map((name) => ({ type: "function", name, parameters: { type: "object" } }));
  const final = await client.responses.stream({ model: "m", input: "go", tools }).finalResponse();
  console.log("status:", final.status);
  for (const item of final.output) {
    if (item.type === "function_call") console.log("call", item.call_id, item.name, item.arguments, item.status);
  }
"#
    .into()
}

fn node_anthropic() -> String {
    r#"  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic({ baseURL: BASE, apiKey: "unused", maxRetries: 0 });
  const tools = TOOLS.map((name) => ({ name, input_schema: { type: "object" } }));
  const stream = client.messages.stream({ model: "m", max_tokens: 1024, messages: [{ role: "user", content: "go" }], tools });
  const final = await stream.finalMessage();
  console.log("stop_reason:", final.stop_reason);
  for (const block of final.content) {
    if (block.type === "tool_use") console.log("call", block.id, block.name, JSON.stringify(block.input));
  }
"#
    .into()
}

fn node_vercel(dialect: &str) -> String {
    let model = match dialect {
        "openai-responses" => {
            "createOpenAI({ baseURL: BASE + \"/v1\", apiKey: \"unused\" }).responses(\"m\")"
        }
        "anthropic" => "createAnthropic({ baseURL: BASE + \"/v1\", apiKey: \"unused\" })(\"m\")",
        _ => "createOpenAI({ baseURL: BASE + \"/v1\", apiKey: \"unused\" }).chat(\"m\")",
    };
    let import = if dialect == "anthropic" {
        "const { createAnthropic } = await import(\"@ai-sdk/anthropic\");"
    } else {
        "const { createOpenAI } = await import(\"@ai-sdk/openai\");"
    };
    format!(
        r#"  const {{ streamText, tool, jsonSchema }} = await import("ai");
  {import}
  // No `execute`: the tool calls are handed over, not run.
  const tools = Object.fromEntries(TOOLS.map((name) => [name, tool({{ inputSchema: jsonSchema({{ type: "object" }}) }})]));
  const result = streamText({{ model: {model}, prompt: "go", tools, maxRetries: 0 }});
  for await (const part of result.fullStream) {{
    if (["tool-call", "tool-error", "error", "finish"].includes(part.type)) console.log(part.type, JSON.stringify(part));
  }}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn the_language_comes_from_the_subject_command() {
        let tools = vec!["get_weather".to_string()];
        let r = |subject, dialect| Reproducer { subject, dialect, tools: &tools, bytes: b"data: x\n\n" };
        let (lang, py) =
            script(&r("exec:.venv/bin/python examples/sdks/python/openai_chat.py", "openai-chat")).unwrap();
        assert_eq!(lang, "Python");
        assert!(py.contains("chat.completions.stream") && py.contains("\"get_weather\""), "{py}");
        let (lang, js) =
            script(&r("exec:node examples/sdks/node/anthropic.mjs --policy documented", "anthropic"))
                .unwrap();
        assert!(lang.starts_with("Node") && js.contains("@anthropic-ai/sdk"), "{js}");
        assert!(script(&r("exec:target/release/toolcert-genai", "openai-chat"))
            .unwrap_err()
            .contains("neither"));
        assert!(script(&r("builtin:mutant/name-keyed", "openai-chat")).is_err());
    }
}
