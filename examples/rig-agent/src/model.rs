//! A scripted completion model: a rig 0.44 wire and transport that answer from a script instead
//! of a provider, so the example runs without a network or an API key.
//!
//! rig 0.44 splits a model into a [`Wire`] (how requests and replies are shaped) and a
//! [`Transport`] (how they travel). Here the wire passes the request through untouched and reads
//! each reply as whole content blocks; the transport plays the next scripted [`Step`], reading
//! the conversation so far the way a model would.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rig_core::completion::options::{Mapping, OptionFields, OptionMap};
use rig_core::completion::{Accepts, CompletionRequest, FinishReason, ReplayTarget};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::{EncodeError, ProviderError};
use rig_core::message::{Api, CallId, Message, ToolName, ToolResultContent, UserContent};
use rig_core::operation::{Block, Completion, Finish};
use rig_core::wire::document::{Reassemble, Serves};
use rig_core::wire::{Decoder, Descriptor, Flow, Mode, Out, Wire, WireEvent};

/// What the scripted model does on its next turn.
#[derive(Debug, Clone)]
pub enum Step {
    /// Calls `ask_user_question` with this call id and these arguments.
    Ask {
        /// The tool-call id, as a provider would issue it.
        call_id: String,
        /// The arguments.
        arguments: serde_json::Value,
    },
    /// Replies with text built from the last tool result it received.
    Reply(fn(&str) -> String),
}

/// One reply on the wire: content blocks, each stated whole.
#[derive(Debug, Clone)]
pub enum Frame {
    /// Answer text.
    Text(String),
    /// A tool call: id, tool name, argument JSON text.
    Call(String, String, String),
}

/// The wire: requests pass through as they are; replies are [`Frame`]s.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptedWire;

impl Wire for ScriptedWire {
    type Op = Completion;
    type Payload = CompletionRequest;
    type Frame = Frame;
    type Decoder<'id> = FrameDecoder<'id>;
    type Reassembler = Document;

    fn describe(&self) -> Descriptor<'_> {
        Descriptor::new(PROVIDER).model(MODEL).replay(self)
    }

    fn encode(&self, request: CompletionRequest, _mode: Mode) -> Result<CompletionRequest, EncodeError> {
        Ok(request)
    }

    fn decoder<'id>(&self) -> FrameDecoder<'id> {
        FrameDecoder(PhantomData)
    }
}

const PROVIDER: &str = "scripted";
const MODEL: &str = "scripted-model";

/// How rig shapes the conversation for this wire: every kind of content, and no request option
/// (temperature, seed, …) has a field to go to.
impl ReplayTarget for ScriptedWire {
    fn api(&self) -> Api {
        Api::from_static("scripted")
    }

    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model(&self) -> &str {
        MODEL
    }

    fn accepts(&self, _model: &str) -> Accepts {
        Accepts::ALL
    }

    fn map_options(&self, _request: &CompletionRequest, fields: OptionFields<'_>) -> OptionMap {
        let OptionFields {
            reasoning,
            cache,
            service_tier,
            verbosity,
            parallel_tool_calls,
            top_p,
            seed,
            stop,
        } = fields;
        let ignored = |set: bool| {
            if set { Mapping::Omit("a scripted model takes no options") } else { Mapping::Nothing }
        };
        OptionMap {
            reasoning: ignored(reasoning.is_some()),
            cache: ignored(cache.is_some()),
            service_tier: ignored(service_tier.is_some()),
            verbosity: ignored(verbosity.is_some()),
            parallel_tool_calls: ignored(parallel_tool_calls.is_some()),
            top_p: ignored(top_p.is_some()),
            seed: ignored(seed.is_some()),
            stop: ignored(!stop.is_empty()),
        }
    }
}

/// Writes each [`Frame`] as one whole block and ends the reply after it.
#[derive(Debug)]
pub struct FrameDecoder<'id>(PhantomData<fn(&'id ()) -> &'id ()>);

impl<'id> Decoder<'id, Completion, Frame> for FrameDecoder<'id> {
    type Event = Frame;

    fn classify(&self, frame: Frame) -> WireEvent<Frame> {
        WireEvent::Known(frame)
    }

    fn decode(&mut self, frame: Frame, mut out: Out<'id, Completion>) -> Result<Flow, ProviderError> {
        let index = out.fresh_index();
        let reason = match frame {
            Frame::Text(text) => {
                out.whole(index, Block::Text, serde_json::Value::Null, &text)?;
                FinishReason::Stop
            }
            Frame::Call(id, name, arguments) => {
                let name = ToolName::new(name).map_err(|e| ProviderError::Response(e.to_string()))?;
                let block = Block::Call { id: CallId::from_wire(id), name };
                out.whole(index, block, serde_json::Value::Null, &arguments)?;
                FinishReason::ToolCalls
            }
        };
        Ok(out.end(Finish { reason: Some(reason), ..Finish::default() }))
    }
}

/// The reply document rig records: the frame, as JSON.
#[derive(Debug, Default)]
pub struct Document(serde_json::Value);

impl Serves<Completion> for Document {}

impl Reassemble<Frame> for Document {
    fn absorb(&mut self, frame: &Frame) {
        self.0 = match frame {
            Frame::Text(text) => serde_json::json!({ "text": text }),
            Frame::Call(id, name, arguments) => {
                serde_json::json!({ "id": id, "name": name, "arguments": arguments })
            }
        };
    }

    fn finish(self) -> serde_json::Value {
        self.0
    }
}

/// The transport: plays the script, one step per request, and keeps every request it saw.
#[derive(Debug, Clone)]
pub struct Script {
    steps: Arc<Mutex<VecDeque<Step>>>,
    requests: Arc<Mutex<Vec<CompletionRequest>>>,
}

impl Script {
    /// A script of `steps`, played in order.
    #[must_use]
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self { steps: Arc::new(Mutex::new(steps.into_iter().collect())), requests: Arc::default() }
    }

    /// The model over this script, to hand to `AgentBuilder::new`.
    #[must_use]
    pub fn model(&self) -> Model<ScriptedWire, Self> {
        Model::new(ScriptedWire, self.clone())
    }

    /// The requests the model received, oldest first.
    #[must_use]
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The next step's reply; `None` when the script is over.
    fn reply(&self, request: &CompletionRequest) -> Option<Frame> {
        let step = self.steps.lock().unwrap_or_else(PoisonError::into_inner).pop_front()?;
        Some(match step {
            Step::Ask { call_id, arguments } => {
                Frame::Call(call_id, askuser_tool::TOOL_NAME.to_owned(), arguments.to_string())
            }
            Step::Reply(reply) => Frame::Text(reply(&last_tool_result(request).unwrap_or_default())),
        })
    }
}

/// The text of the newest tool result in the request's conversation.
#[must_use]
pub fn last_tool_result(request: &CompletionRequest) -> Option<String> {
    request.chat_history.iter().rev().find_map(|message| match message {
        Message::User { content } => content.iter().find_map(|item| match item {
            UserContent::ToolResult(result) => Some(
                result
                    .content
                    .iter()
                    .filter_map(|part| match part {
                        ToolResultContent::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        }),
        _ => None,
    })
}

impl Transport<ScriptedWire> for Script {
    fn send(&self, payload: CompletionRequest, _exchange: Exchange) -> Opening<Frame> {
        let reply = self.reply(&payload);
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).push(payload);
        match reply {
            Some(frame) => Opening::ready(Opened::new(Once(Some(Ok(frame))))),
            None => {
                Opening::failed(ProviderError::Response("the scripted model has no more turns".to_owned()))
            }
        }
    }
}

/// A stream of one item.
struct Once<T>(Option<T>);

impl<T: Unpin> futures_core::Stream for Once<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<T>> {
        Poll::Ready(self.0.take())
    }
}
