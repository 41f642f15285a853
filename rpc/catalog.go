package rpc

// CommandInfo describes one command of the protocol: the struct it is sent
// as and the data of its success response. The JSON Schema
// (docs/rpc.schema.json) and the typed client are built from this list.
type CommandInfo struct {
	// Name is the command's "type" member.
	Name string
	// Doc says what the command does (one sentence).
	Doc string
	// Command is the zero value of the struct the command is sent as.
	Command any
	// Data is the zero value of a success response's data; nil when a
	// success response has no data member.
	Data any
	// DataNullable is set when data may be the JSON null (cycle_model and
	// cycle_thinking_level when there is nothing to cycle).
	DataNullable bool
	// DataOptional is set when a success response may lack data (prompt and
	// abort_and_prompt on the legacy wire and oh-my-pi's are acknowledged
	// without it).
	DataOptional bool
	// AliasOf names the current command an older name stands for (pi's
	// names before January 2026, oh-my-pi's, set_entry_label); "" for
	// current names.
	AliasOf string
	// Unavailable marks a command this version answers with success:false
	// ("not available yet"); no command is marked at present.
	Unavailable bool
}

// Commands lists every command this version knows, current names first,
// then the older names, then the commands not available yet.
func Commands() []CommandInfo {
	return []CommandInfo{
		{Name: CmdPrompt, Doc: "Start a run with a user message, or queue it while streaming (streamingBehavior).", Command: PromptCommand{}, Data: PromptData{}, DataOptional: true},
		{Name: CmdSteer, Doc: "Queue a steering message for the running turn.", Command: MessageCommand{}, Data: PromptData{}},
		{Name: CmdFollowUp, Doc: "Queue a message to be sent once the run has finished.", Command: MessageCommand{}, Data: PromptData{}},
		{Name: CmdAbort, Doc: "Abort the running work; answered once the run has stopped.", Command: SimpleCommand{}},
		{Name: CmdAbortAndPrompt, Doc: "Abort the running work, then prompt (atomically).", Command: MessageCommand{}, Data: PromptData{}, DataOptional: true},
		{Name: CmdClearQueue, Doc: "Empty both queues; data lists what was removed.", Command: SimpleCommand{}, Data: ClearQueueData{}},
		{Name: CmdNewSession, Doc: "Start a new session (in another directory with cwd).", Command: NewSessionCommand{}, Data: CancelledData{}},
		{Name: CmdGetState, Doc: "Report the session state.", Command: SimpleCommand{}, Data: SessionState{}},
		{Name: CmdGetMessages, Doc: "Return the messages of the current branch.", Command: SimpleCommand{}, Data: MessagesData{}},
		{Name: CmdSetModel, Doc: "Select a model; data is the model.", Command: SetModelCommand{}, Data: Model{}},
		{Name: CmdCycleModel, Doc: "Switch to the next model; data is null when there is nothing to cycle.", Command: SimpleCommand{}, Data: CycleModelData{}, DataNullable: true},
		{Name: CmdGetAvailableModels, Doc: "List the models that can be used.", Command: SimpleCommand{}, Data: ModelsData{}},
		{Name: CmdSetThinkingLevel, Doc: "Set the thinking level.", Command: SetThinkingLevelCommand{}},
		{Name: CmdCycleThinkingLevel, Doc: "Switch to the next thinking level; data is null when the model has none.", Command: SimpleCommand{}, Data: LevelData{}, DataNullable: true},
		{Name: CmdGetAvailableThinkingLevels, Doc: "List the thinking levels of the current model.", Command: SimpleCommand{}, Data: LevelsData{}},
		{Name: CmdSetSteeringMode, Doc: "Set how steering messages are delivered.", Command: SetModeCommand{}},
		{Name: CmdSetFollowUpMode, Doc: "Set how follow-up messages are delivered.", Command: SetModeCommand{}},
		{Name: CmdSetInterruptMode, Doc: "Set when steering messages interrupt a turn.", Command: SetModeCommand{}},
		{Name: CmdSetAutoCompaction, Doc: "Turn automatic compaction on or off.", Command: SetEnabledCommand{}},
		{Name: CmdSetAutoRetry, Doc: "Turn automatic retries of failed model calls on or off.", Command: SetEnabledCommand{}},
		{Name: CmdAbortRetry, Doc: "Cancel a pending automatic retry.", Command: SimpleCommand{}},
		{Name: CmdBash, Doc: "Run a user shell command; output streams as bash_execution_update.", Command: BashCommand{}, Data: BashData{}},
		{Name: CmdAbortBash, Doc: "Abort the running bash command.", Command: SimpleCommand{}},
		{Name: CmdGetSessionStats, Doc: "Report message and token counts of the session.", Command: SimpleCommand{}, Data: SessionStats{}},
		{Name: CmdSwitchSession, Doc: "Open another session file.", Command: SwitchSessionCommand{}, Data: CancelledData{}},
		{Name: CmdFork, Doc: "Fork the session before a user message; data.text is that message.", Command: ForkCommand{}, Data: ForkData{}},
		{Name: CmdClone, Doc: "Copy the current branch into a new session.", Command: SimpleCommand{}, Data: CancelledData{}},
		{Name: CmdGetForkMessages, Doc: "List the user messages that can be forked from.", Command: SimpleCommand{}, Data: ForkMessagesData{}},
		{Name: CmdGetEntries, Doc: "Return the raw session entries after since.", Command: GetEntriesCommand{}, Data: EntriesData{}},
		{Name: CmdGetTree, Doc: "Return the session tree (pi's raw form; flat optional).", Command: GetTreeCommand{}, Data: TreeData{}},
		{Name: CmdGetLastAssistantText, Doc: "Return the text of the last assistant message, or null.", Command: SimpleCommand{}, Data: TextData{}},
		{Name: CmdSetSessionName, Doc: "Name the session.", Command: SetSessionNameCommand{}},

		{Name: CmdBranch, Doc: "Older name of fork.", Command: ForkCommand{}, Data: ForkData{}, AliasOf: CmdFork},
		{Name: CmdGetBranchMessages, Doc: "Older name of get_fork_messages.", Command: SimpleCommand{}, Data: ForkMessagesData{}, AliasOf: CmdGetForkMessages},
		{Name: CmdQueueMessage, Doc: "Older name of steer.", Command: MessageCommand{}, Data: PromptData{}, AliasOf: CmdSteer},
		{Name: CmdSetQueueMode, Doc: "Older name of set_steering_mode.", Command: SetModeCommand{}, AliasOf: CmdSetSteeringMode},

		{Name: CmdCompact, Doc: "Compact the session (aborts a running turn first).", Command: CompactCommand{}, Data: CompactionResult{}},
		{Name: CmdNavigateTree, Doc: "Move the session leaf to an entry, optionally summarising the branch left.", Command: NavigateTreeCommand{}, Data: NavigateTreeData{}},
		{Name: CmdSetLabel, Doc: "Label an entry (a blank label clears it).", Command: SetLabelCommand{}},
		{Name: CmdSetEntryLabel, Doc: "Label an entry: an alias of set_label whose entry field is targetId.", Command: SetEntryLabelCommand{}},
		{Name: CmdAbortBranchSummary, Doc: "Cancel a branch summary in progress.", Command: SimpleCommand{}},
		{Name: CmdGetSessionTree, Doc: "The session tree for browsing (view \"\" or \"browse\", flat optional).", Command: GetSessionTreeCommand{}, Data: SessionTreeData{}},
		{Name: CmdListSessions, Doc: "List sessions of this project or of all projects, newest first.", Command: ListSessionsCommand{}, Data: ListSessionsData{}},
		{Name: CmdGetContextUsage, Doc: "How full the context window is ({} when not known yet).", Command: SimpleCommand{}, Data: ContextUsageData{}},
		{Name: CmdGetTools, Doc: "Every tool and the names of the active ones.", Command: SimpleCommand{}, Data: ToolsData{}},
		{Name: CmdSetActiveTools, Doc: "Activate exactly the named tools.", Command: SetActiveToolsCommand{}, Data: ActiveToolsData{}},
		{Name: CmdMCPStatus, Doc: "The MCP servers: state, exposure, tool count, last error; and the configuration entries skipped.", Command: SimpleCommand{}, Data: MCPStatusData{}},
		{Name: CmdSetHostTools, Doc: "Declare tools the client executes (host_tool_call / host_tool_result).", Command: SetHostToolsCommand{}, Data: HostToolsData{}},
		{Name: CmdRenameSession, Doc: "Name any session.", Command: RenameSessionCommand{}},
		{Name: CmdDeleteSession, Doc: "Move a session file to <agentDir>/trash/ (not the active one).", Command: DeleteSessionCommand{}, Data: DeleteSessionData{}},
		{Name: CmdSetTodos, Doc: "Replace the todo plan's phases.", Command: SetTodosCommand{}, Data: TodosData{}},
		{Name: CmdGetCommands, Doc: "The slash commands: prompt templates, skills and extension commands.", Command: SimpleCommand{}, Data: CommandsData{}},
		{Name: CmdExportHTML, Doc: "Export the current branch as one self-contained HTML file, written to a file or (inline) returned in the response.", Command: ExportHTMLCommand{}, Data: ExportHTMLData{}},
		{Name: CmdListDirectory, Doc: "The directories in a directory (dotfiles hidden, sorted; \"\" is home): a web UI's project picker.", Command: ListDirectoryCommand{}, Data: ListDirectoryData{}},
		{Name: CmdReloadResources, Doc: "Reload settings, templates, skills, rules and context files; data lists the commands.", Command: SimpleCommand{}, Data: CommandsData{}},
		{Name: CmdGetLoginProviders, Doc: "The subscription logins: id, name, whether one can run here and whether auth.json holds one.", Command: SimpleCommand{}, Data: LoginProvidersData{}},
		{Name: CmdLogin, Doc: "Run a provider's login flow (its interaction as extension_ui_request frames); answered when it has finished.", Command: LoginCommand{}, Data: LoginData{}},
		{Name: CmdLogout, Doc: "Remove a provider's stored login or key from auth.json.", Command: LogoutCommand{}, Data: LogoutData{}},

		{Name: CmdNegotiateProtocol, Doc: "Switch this connection to protocol v2, oh-my-pi's wire (protocolVersion must be 2).", Command: NegotiateProtocolCommand{}, Data: ProtocolData{}},
		{Name: CmdGetAvailableCommands, Doc: "The slash commands as oh-my-pi lists them: name, source, description, input hint.", Command: SimpleCommand{}, Data: AvailableCommandsData{}},
		{Name: CmdOpenSession, Doc: "Continue the newest non-empty session of a session directory, or start one there.", Command: OpenSessionCommand{}, Data: OpenSessionData{}},
		{Name: CmdSetFastMode, Doc: "Turn fast mode on or off: model calls ask for the provider's priority processing (OpenAI's API: service_tier priority); refused for a model without it.", Command: SetFastModeCommand{}, Data: FastModeData{}},
		{Name: CmdSetSubagentSubscription, Doc: "Select the subagent frames this connection gets: off (the default) or progress (subagent_lifecycle); events is refused (no subagent_event frames).", Command: SetSubagentSubscriptionCommand{}, Data: SubagentSubscriptionData{}},
		{Name: CmdGetSubagents, Doc: "The task tool's subagents under way.", Command: SimpleCommand{}, Data: SubagentsData{}},
		{Name: CmdGetSubagentMessages, Doc: "A subagent's transcript: always refused, Pisces' subagents run in memory without a session file.", Command: GetSubagentMessagesCommand{}},
		{Name: CmdHandoff, Doc: "Replace the history before the kept recent messages with a handoff document the model writes (a compaction of the session); refused while a run goes on.", Command: HandoffCommand{}, Data: HandoffData{}},
		{Name: CmdSetEventFilter, Doc: "Select the session events this connection gets (null: all).", Command: SetEventFilterCommand{}, Data: EventFilterData{}},
		{Name: CmdGetMessagesPage, Doc: "One page of the context's messages (at most limit, about 768 KiB), with a cursor to the next.", Command: GetMessagesPageCommand{}, Data: MessagesPageData{}},
	}
}

// EventInfo describes one event type.
type EventInfo struct {
	// Name is the event's "type" member.
	Name string
	// Doc says when the event is sent (one sentence).
	Doc string
	// Event is a zero value of the event's struct.
	Event Event
	// Legacy is set for events only the older wire (--rpc-compat legacy)
	// sends.
	Legacy bool
	// OMP is set for frames only oh-my-pi's wire sends (after
	// negotiate_protocol, or with --rpc-compat omp).
	OMP bool
}

// Events lists every event type, in the order of the constants.
func Events() []EventInfo {
	return []EventInfo{
		{Name: EventReady, Doc: "The first line on stdout: the process takes commands.", Event: &ReadyEvent{}},
		{Name: EventAgentStart, Doc: "A run starts.", Event: &AgentStartEvent{}},
		{Name: EventAgentEnd, Doc: "A run ends, with the messages it produced.", Event: &AgentEndEvent{}},
		{Name: EventAgentSettled, Doc: "Nothing more is pending (retry, compaction, queue).", Event: &AgentSettledEvent{}},
		{Name: EventTurnStart, Doc: "A model turn starts.", Event: &TurnStartEvent{}},
		{Name: EventTurnEnd, Doc: "A model turn ends, with its assistant message and tool results.", Event: &TurnEndEvent{}},
		{Name: EventMessageStart, Doc: "A message starts.", Event: &MessageStartEvent{}},
		{Name: EventMessageUpdate, Doc: "One streaming step of an assistant message.", Event: &MessageUpdateEvent{}},
		{Name: EventMessageEnd, Doc: "A message is complete; its message is authoritative.", Event: &MessageEndEvent{}},
		{Name: EventToolExecutionStart, Doc: "A tool call starts.", Event: &ToolExecutionStartEvent{}},
		{Name: EventToolExecutionUpdate, Doc: "A tool call's accumulated partial result.", Event: &ToolExecutionUpdateEvent{}},
		{Name: EventToolExecutionEnd, Doc: "A tool call's final result.", Event: &ToolExecutionEndEvent{}},
		{Name: EventQueueUpdate, Doc: "The queued steering and follow-up texts.", Event: &QueueUpdateEvent{}},
		{Name: EventQueueChanged, Doc: "The number of queued messages changed.", Event: &QueueChangedEvent{}},
		{Name: EventSessionChanged, Doc: "Another session is current (new, switch, fork, tree, reload).", Event: &SessionChangedEvent{}},
		{Name: EventCompactionStart, Doc: "A compaction starts.", Event: &CompactionStartEvent{}},
		{Name: EventCompactionEnd, Doc: "A compaction ends.", Event: &CompactionEndEvent{}},
		{Name: EventAutoCompactionStart, Doc: "compaction_start on the legacy wire.", Event: &CompactionStartEvent{}, Legacy: true},
		{Name: EventAutoCompactionEnd, Doc: "compaction_end on the legacy wire.", Event: &CompactionEndEvent{}, Legacy: true},
		{Name: EventAutoRetryStart, Doc: "A failed model call will be retried.", Event: &AutoRetryStartEvent{}},
		{Name: EventAutoRetryEnd, Doc: "A retry sequence ends.", Event: &AutoRetryEndEvent{}},
		{Name: EventBashExecutionUpdate, Doc: "Output of the running bash command.", Event: &BashExecutionUpdateEvent{}},
		{Name: EventEntryAppended, Doc: "A session entry was written outside the message flow.", Event: &EntryAppendedEvent{}},
		{Name: EventSessionInfoChanged, Doc: "The session's name changed.", Event: &SessionInfoChangedEvent{}},
		{Name: EventThinkingLevelChanged, Doc: "The thinking level changed.", Event: &ThinkingLevelChangedEvent{}},
		{Name: EventExtensionError, Doc: "An extension failed.", Event: &ExtensionErrorEvent{}},
		{Name: EventHookError, Doc: "extension_error on the legacy wire.", Event: &HookErrorEvent{}, Legacy: true},
		{Name: EventTTSRTriggered, Doc: "Stream rules fired: the stream was interrupted and the rules were added as a hidden message.", Event: &TTSRTriggeredEvent{}},
		{Name: EventMCPServerChanged, Doc: "An MCP server's state or tool list changed.", Event: &MCPServerChangedEvent{}},
		{Name: EventSummarizationRetryScheduled, Doc: "A summary model call (compaction or branch summary) failed transiently and will be made again after delayMs.", Event: &SummarizationRetryScheduledEvent{}},
		{Name: EventSummarizationRetryAttemptStart, Doc: "The retried summary call starts: source \"compaction\" with the compaction's reason, or \"branchSummary\".", Event: &SummarizationRetryAttemptStartEvent{}},
		{Name: EventSummarizationRetryFinished, Doc: "The retries of a summary call are over (it succeeded, failed or was aborted).", Event: &SummarizationRetryFinishedEvent{}},
		{Name: EventPromptResult, Doc: "How the work of an accepted prompt or abort_and_prompt ended (id is the command's).", Event: &PromptResultEvent{}, OMP: true},
		{Name: EventSessionSettled, Doc: "The session is idle with nothing queued, after the last prompt_result of a stretch of work.", Event: &SessionSettledEvent{}, OMP: true},
		{Name: EventRPCChunk, Doc: "One piece of a frame larger than 1 MiB (protocol v2).", Event: &RPCChunkEvent{}, OMP: true},
		{Name: EventAvailableCommandsUpdate, Doc: "The slash commands (as get_available_commands lists them), after the switch to oh-my-pi's wire, a session change or reload_resources.", Event: &AvailableCommandsUpdateEvent{}, OMP: true},
		{Name: EventModelChanged, Doc: "The model changed (set_model, cycle_model); get_state has the new one.", Event: &ModelChangedEvent{}, OMP: true},
		{Name: EventNotice, Doc: "A message for the user about the session: a failed write of the session file (source session-persistence, level error; once until a write succeeds again), an MCP server that needs attention (source mcp, in place of the notify extension_ui_request pi's wire gets).", Event: &NoticeEvent{}, OMP: true},
		{Name: EventSubagentLifecycle, Doc: "A task subagent started or ended (set_subagent_subscription progress).", Event: &SubagentLifecycleEvent{}, OMP: true},
		{Name: EventRPCFrameError, Doc: "Replaces a frame larger than 64 MiB (protocol v2).", Event: &RPCFrameErrorEvent{}, OMP: true},
	}
}

// HookErrorEvent is extension_error on the legacy wire.
type HookErrorEvent struct {
	Type     string `json:"type"`
	HookPath string `json:"hookPath"`
	Event    string `json:"event"`
	Error    string `json:"error"`
}

// EventType returns "hook_error".
func (*HookErrorEvent) EventType() string { return EventHookError }
