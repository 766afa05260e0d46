package policy

// The table of raw CDP commands an agent may send, and nothing else: a
// command that is not here is refused, whatever Chrome or a cdproto upgrade
// adds. Each entry is written "Domain.command param param=false …": the
// parameters it may take (any other is refused) and, with "=false", a
// parameter whose only allowed value is false (its true is the danger);
// with "=true", one whose only allowed value is true, sent as true when
// left out (its false is the danger).
//
// Parameters that name an execution context (contextId, uniqueContextId,
// executionContextId), a frame (frameId) or a piercing walk (pierce=true)
// appear in no entry: they reach the page's other worlds, including
// webcodex's own isolated world and frames the origin gate hides.

// Reasons a group of commands is allowed on the open web.
const (
	whyEval       = "script as the page's main world, the same as the evaluate verb (which the evaluate switch governs)"
	whyObjects    = "works on objects this session obtained from the page's own script"
	whyDOMRead    = "reads this page's DOM, as its own script could"
	whyDOMWrite   = "edits this page's DOM, as its own script could"
	whyCSS        = "reads or edits this page's style sheets and computed style"
	whyA11y       = "reads this page's accessibility tree (what the snapshot verb shows)"
	whyDebug      = "debugs the scripts this page runs, as DevTools would"
	whyProfile    = "profiles this page's script and rendering"
	whyEmulate    = "changes how this tab sees its device and environment; cleared when the raw session is reset"
	whyInput      = "input as the person at the keyboard, mouse or touch screen, which the input verbs already are"
	whyRender     = "renders this page, as a screenshot or print does"
	whyOverlay    = "draws DevTools highlights over this page; reads nothing"
	whyNetwork    = "how this tab's requests are sent or emulated; cleared when the raw session is reset"
	whyPlumbing   = "turns on or off a domain's events on the raw session, which never reach the agent"
	whyDialog     = "answers a prompt of this page as the person would"
	whyPage       = "acts on this tab as the person at its toolbar could"
	whyStream     = "reads a stream handle this session created (a PDF from Page.printToPDF)"
	whyAuthn      = "a virtual authenticator for this tab, with credentials the caller supplies"
	whyPlantOpen  = "script for the tab's next documents: on the open web every document may be scripted by evaluate anyway; removed when the raw session is reset"
	whyAnimations = "inspects and controls this page's animations"
)

// Reasons a command is withheld while an allowlist is in force (a non-empty
// --allow, and every attached browser). Same-site frames of other origins
// share the page's renderer, so ids the inspector hands out reach them; the
// frame-aware verbs (snapshot, read, screenshot, input) are the way in.
const (
	withheldIDs       = "takes or returns DOM node, object, script or style ids, which reach the documents of same-site frames of other origins in the same renderer"
	withheldEvalIDs   = "addresses an object or compiled script by id, which can name one from a same-site frame of another origin"
	withheldHeap      = "enumerates the renderer's heap, which holds the objects of same-site frames of other origins"
	withheldDebug     = "the debugger reports and pauses the scripts of every frame in the renderer, including frames of other origins, and its breakpoints and conditions run code in later documents"
	withheldState     = "sets state on the tab that outlives the origin it was set on (the next document may be a denied one)"
	withheldPlant     = "plants code that runs in later documents, which may be of a denied origin"
	withheldSerialize = "serializes or renders the whole page with its frames, including frames of denied origins"
	withheldInput     = "raw input is not hit-tested against frames: the input verbs refuse input that lands in a denied frame, raw Input cannot"
	withheldScreen    = "captures the page with the frames of denied origins unmasked; the screenshot verb masks them"
	withheldHistory   = "reveals or changes the tab's history, which holds the URLs of other origins"
	withheldDialog    = "the dialog may belong to a frame of a denied origin; answer through the dialog verb"
	withheldTab       = "acts on the person's tab and window beyond the page"
	withheldLowValue  = "reports renderer-wide state (every frame's); not needed with an allowlist"
)

// entry is one allowed command as written in the table.
type entry struct {
	spec     string // "Method param param=false …"
	why      string // why the open web may send it
	withheld string // why an allowlist withholds it; "" when narrowed is set
	narrowed string // the entry under an allowlist: "param param=false …" ("-" for none)
	nwhy     string // why it stays under an allowlist
}

// open is a command allowed on the open web and withheld under an allowlist.
func open(spec, why, withheld string) entry { return entry{spec: spec, why: why, withheld: withheld} }

// both is a command allowed on the open web and, with the narrowed
// parameters, under an allowlist.
func both(spec, why, narrowed, nwhy string) entry {
	return entry{spec: spec, why: why, narrowed: narrowed, nwhy: nwhy}
}

// table is every command raw CDP may send. Sorted by method in [Commands].
var table = []entry{
	// Runtime: the page's main world.
	both("Runtime.evaluate expression objectGroup includeCommandLineAPI=false silent returnByValue generatePreview userGesture awaitPromise throwOnSideEffect timeout disableBreaks replMode allowUnsafeEvalBlockedByCSP serializationOptions",
		whyEval+"; no context id (only the main world) and no command-line API ($0, queryObjects, inspect reach past the page's script)",
		"expression objectGroup includeCommandLineAPI=false silent returnByValue=true awaitPromise throwOnSideEffect timeout disableBreaks replMode userGesture=false",
		"script in the allowed main document's main world, bounded by the same-origin policy like the page's own script; results by value only: returnByValue is sent as true, no previews or deep serialization of other frames' windows, and the answer keeps no object id or preview (a thrown object comes back as its description, a string); no user activation (it would let the page open or navigate other origins' windows)"),
	open("Runtime.callFunctionOn functionDeclaration objectId arguments silent returnByValue generatePreview userGesture awaitPromise objectGroup throwOnSideEffect serializationOptions", whyEval+"; on an object, never on a context id", withheldEvalIDs),
	open("Runtime.awaitPromise promiseObjectId returnByValue generatePreview", whyObjects, withheldEvalIDs),
	open("Runtime.getProperties objectId ownProperties accessorPropertiesOnly generatePreview nonIndexedPropertiesOnly", whyObjects, withheldEvalIDs),
	open("Runtime.getExceptionDetails errorObjectId", whyObjects, withheldEvalIDs),
	open("Runtime.releaseObject objectId", whyObjects, withheldEvalIDs),
	both("Runtime.releaseObjectGroup objectGroup", whyObjects, "objectGroup", "releases this session's own object group; names no other frame's objects"),
	open("Runtime.compileScript expression sourceURL persistScript", whyEval, withheldEvalIDs),
	open("Runtime.runScript scriptId objectGroup silent includeCommandLineAPI=false returnByValue generatePreview awaitPromise", whyEval, withheldEvalIDs),
	open("Runtime.queryObjects prototypeObjectId objectGroup", "enumerates the page's heap objects; on the open web every frame it holds is allowed", withheldHeap),
	open("Runtime.globalLexicalScopeNames", "the main world's global let/const names, which its script can read", withheldLowValue),
	open("Runtime.getHeapUsage", "the size of the page's heap", withheldLowValue),
	open("Runtime.getIsolateId", "an opaque id of the page's isolate", withheldLowValue),
	open("Runtime.enable", whyPlumbing, withheldLowValue),
	open("Runtime.disable", whyPlumbing, withheldLowValue),
	open("Runtime.discardConsoleEntries", whyPlumbing, withheldLowValue),
	open("Runtime.setCustomObjectFormatterEnabled enabled", whyPlumbing, withheldLowValue),
	open("Runtime.setMaxCallStackSizeToCapture size", whyPlumbing, withheldLowValue),
	open("Runtime.terminateExecution", "stops the script running in the page's renderer", "stops whatever script the renderer runs, which may be a frame of another origin"),

	// DOM: this page's document (no frame ids, no piercing walks).
	open("DOM.enable includeWhitespace", whyPlumbing, withheldIDs),
	open("DOM.disable", whyPlumbing, withheldIDs),
	open("DOM.getDocument depth pierce=false", whyDOMRead, withheldIDs),
	open("DOM.describeNode nodeId backendNodeId objectId depth pierce=false", whyDOMRead, withheldIDs),
	open("DOM.requestChildNodes nodeId depth pierce=false", whyDOMRead, withheldIDs),
	open("DOM.querySelector nodeId selector", whyDOMRead, withheldIDs),
	open("DOM.querySelectorAll nodeId selector", whyDOMRead, withheldIDs),
	open("DOM.getAttributes nodeId", whyDOMRead, withheldIDs),
	open("DOM.getOuterHTML nodeId backendNodeId objectId includeShadowDOM", whyDOMRead, withheldIDs),
	open("DOM.getBoxModel nodeId backendNodeId objectId", whyDOMRead, withheldIDs),
	open("DOM.getContentQuads nodeId backendNodeId objectId", whyDOMRead, withheldIDs),
	open("DOM.getNodeForLocation x y includeUserAgentShadowDOM ignorePointerEventsNone", whyDOMRead, withheldIDs),
	open("DOM.getNodesForSubtreeByStyle nodeId computedStyles pierce=false", whyDOMRead, withheldIDs),
	open("DOM.getRelayoutBoundary nodeId", whyDOMRead, withheldIDs),
	open("DOM.getTopLayerElements", whyDOMRead, withheldIDs),
	open("DOM.getContainerForNode nodeId containerName physicalAxes logicalAxes queriesScrollState queriesAnchored", whyDOMRead, withheldIDs),
	open("DOM.getQueryingDescendantsForContainer nodeId", whyDOMRead, withheldIDs),
	open("DOM.getElementByRelation nodeId relation", whyDOMRead, withheldIDs),
	open("DOM.getAnchorElement nodeId anchorSpecifier", whyDOMRead, withheldIDs),
	open("DOM.collectClassNamesFromSubtree nodeId", whyDOMRead, withheldIDs),
	open("DOM.performSearch query includeUserAgentShadowDOM", whyDOMRead, withheldIDs),
	open("DOM.getSearchResults searchId fromIndex toIndex", whyDOMRead, withheldIDs),
	open("DOM.discardSearchResults searchId", whyDOMRead, withheldIDs),
	open("DOM.pushNodeByPathToFrontend path", whyDOMRead, withheldIDs),
	open("DOM.pushNodesByBackendIdsToFrontend backendNodeIds", whyDOMRead, withheldIDs),
	open("DOM.requestNode objectId", whyDOMRead, withheldIDs),
	open("DOM.resolveNode nodeId backendNodeId objectGroup", whyDOMRead+"; into the main world only (no execution context id)", withheldIDs),
	open("DOM.setInspectedNode nodeId", whyDOMRead, withheldIDs),
	open("DOM.setAttributeValue nodeId name value", whyDOMWrite, withheldIDs),
	open("DOM.setAttributesAsText nodeId text name", whyDOMWrite, withheldIDs),
	open("DOM.removeAttribute nodeId name", whyDOMWrite, withheldIDs),
	open("DOM.removeNode nodeId", whyDOMWrite, withheldIDs),
	open("DOM.setNodeName nodeId name", whyDOMWrite, withheldIDs),
	open("DOM.setNodeValue nodeId value", whyDOMWrite, withheldIDs),
	open("DOM.setOuterHTML nodeId outerHTML", whyDOMWrite, withheldIDs),
	open("DOM.moveTo nodeId targetNodeId insertBeforeNodeId", whyDOMWrite, withheldIDs),
	open("DOM.copyTo nodeId targetNodeId insertBeforeNodeId", whyDOMWrite, withheldIDs),
	open("DOM.focus nodeId backendNodeId objectId", whyDOMWrite, withheldIDs),
	open("DOM.scrollIntoViewIfNeeded nodeId backendNodeId objectId rect", whyDOMWrite, withheldIDs),
	open("DOM.markUndoableState", whyDOMWrite, withheldIDs),
	open("DOM.undo", whyDOMWrite, withheldIDs),
	open("DOM.redo", whyDOMWrite, withheldIDs),
	open("DOMDebugger.getEventListeners objectId depth pierce=false", whyDOMRead, withheldIDs),
	open("DOMDebugger.setDOMBreakpoint nodeId type", whyDebug, withheldDebug),
	open("DOMDebugger.removeDOMBreakpoint nodeId type", whyDebug, withheldDebug),
	open("DOMDebugger.setEventListenerBreakpoint eventName targetName", whyDebug, withheldDebug),
	open("DOMDebugger.removeEventListenerBreakpoint eventName targetName", whyDebug, withheldDebug),
	open("DOMDebugger.setXHRBreakpoint url", whyDebug, withheldDebug),
	open("DOMDebugger.removeXHRBreakpoint url", whyDebug, withheldDebug),
	open("DOMDebugger.setBreakOnCSPViolation violationTypes", whyDebug, withheldDebug),
	open("DOMSnapshot.captureSnapshot computedStyles includePaintOrder includeDOMRects includeBlendedBackgroundColors includeTextColorOpacities", whyDOMRead+"; with every frame, each of an origin the open web allows", withheldSerialize),

	// CSS.
	open("CSS.enable", whyPlumbing, withheldIDs),
	open("CSS.disable", whyPlumbing, withheldIDs),
	open("CSS.getComputedStyleForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getMatchedStylesForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getInlineStylesForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getAnimatedStylesForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getBackgroundColors nodeId", whyCSS, withheldIDs),
	open("CSS.getPlatformFontsForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getLayersForNode nodeId", whyCSS, withheldIDs),
	open("CSS.getMediaQueries", whyCSS, withheldIDs),
	open("CSS.getEnvironmentVariables", whyCSS, withheldIDs),
	open("CSS.getStyleSheetText styleSheetId", whyCSS, withheldIDs),
	open("CSS.collectClassNames styleSheetId", whyCSS, withheldIDs),
	open("CSS.getLocationForSelector styleSheetId selectorText", whyCSS, withheldIDs),
	open("CSS.getLonghandProperties shorthandName value", whyCSS, withheldIDs),
	open("CSS.resolveValues values nodeId propertyName pseudoType pseudoIdentifier", whyCSS, withheldIDs),
	open("CSS.forcePseudoState nodeId forcedPseudoClasses", whyCSS, withheldIDs),
	open("CSS.forceStartingStyle nodeId forced", whyCSS, withheldIDs),
	open("CSS.addRule styleSheetId ruleText location nodeForPropertySyntaxValidation", whyCSS, withheldIDs),
	open("CSS.setStyleSheetText styleSheetId text", whyCSS, withheldIDs),
	open("CSS.setStyleTexts edits nodeForPropertySyntaxValidation", whyCSS, withheldIDs),
	open("CSS.setRuleSelector styleSheetId range selector", whyCSS, withheldIDs),
	open("CSS.setKeyframeKey styleSheetId range keyText", whyCSS, withheldIDs),
	open("CSS.setMediaText styleSheetId range text", whyCSS, withheldIDs),
	open("CSS.setContainerQueryConditionText styleSheetId range text", whyCSS, withheldIDs),
	open("CSS.setSupportsText styleSheetId range text", whyCSS, withheldIDs),
	open("CSS.setScopeText styleSheetId range text", whyCSS, withheldIDs),
	open("CSS.setPropertyRulePropertyName styleSheetId range propertyName", whyCSS, withheldIDs),
	open("CSS.setEffectivePropertyValueForNode nodeId propertyName value", whyCSS, withheldIDs),
	open("CSS.startRuleUsageTracking", whyCSS, withheldIDs),
	open("CSS.stopRuleUsageTracking", whyCSS, withheldIDs),
	open("CSS.takeCoverageDelta", whyCSS, withheldIDs),
	open("CSS.trackComputedStyleUpdates propertiesToTrack", whyCSS, withheldIDs),
	open("CSS.takeComputedStyleUpdates", whyCSS, withheldIDs),

	// Accessibility (no frame ids).
	open("Accessibility.enable", whyPlumbing, withheldIDs),
	open("Accessibility.disable", whyPlumbing, withheldIDs),
	open("Accessibility.getFullAXTree depth", whyA11y, withheldIDs),
	open("Accessibility.getRootAXNode", whyA11y, withheldIDs),
	open("Accessibility.getChildAXNodes id", whyA11y, withheldIDs),
	open("Accessibility.getPartialAXTree nodeId backendNodeId objectId fetchRelatives", whyA11y, withheldIDs),
	open("Accessibility.getAXNodeAndAncestors nodeId backendNodeId objectId", whyA11y, withheldIDs),
	open("Accessibility.queryAXTree nodeId backendNodeId objectId accessibleName role", whyA11y, withheldIDs),

	// Animation.
	open("Animation.enable", whyPlumbing, withheldIDs),
	open("Animation.disable", whyPlumbing, withheldIDs),
	open("Animation.getCurrentTime id", whyAnimations, withheldIDs),
	open("Animation.getPlaybackRate", whyAnimations, withheldIDs),
	open("Animation.setPlaybackRate playbackRate", whyAnimations, withheldIDs),
	open("Animation.releaseAnimations animations", whyAnimations, withheldIDs),
	open("Animation.resolveAnimation animationId", whyAnimations, withheldIDs),
	open("Animation.seekAnimations animations currentTime", whyAnimations, withheldIDs),
	open("Animation.setPaused animations paused", whyAnimations, withheldIDs),
	open("Animation.setTiming animationId duration delay", whyAnimations, withheldIDs),

	// Debugger: scripts this page runs.
	open("Debugger.enable maxScriptsCacheSize", whyDebug, withheldDebug),
	open("Debugger.disable", whyDebug, withheldDebug),
	open("Debugger.getScriptSource scriptId", whyDebug, withheldDebug),
	open("Debugger.searchInContent scriptId query caseSensitive isRegex", whyDebug, withheldDebug),
	open("Debugger.getPossibleBreakpoints start end restrictToFunction", whyDebug, withheldDebug),
	open("Debugger.setBreakpoint location condition", whyDebug, withheldDebug),
	open("Debugger.setBreakpointByUrl lineNumber url urlRegex scriptHash columnNumber condition", whyDebug, withheldDebug),
	open("Debugger.setBreakpointOnFunctionCall objectId condition", whyDebug, withheldDebug),
	open("Debugger.removeBreakpoint breakpointId", whyDebug, withheldDebug),
	open("Debugger.setBreakpointsActive active", whyDebug, withheldDebug),
	open("Debugger.setInstrumentationBreakpoint instrumentation", whyDebug, withheldDebug),
	open("Debugger.setPauseOnExceptions state", whyDebug, withheldDebug),
	open("Debugger.setSkipAllPauses skip", whyDebug, withheldDebug),
	open("Debugger.setAsyncCallStackDepth maxDepth", whyDebug, withheldDebug),
	open("Debugger.setBlackboxPatterns patterns skipAnonymous", whyDebug, withheldDebug),
	open("Debugger.setBlackboxedRanges scriptId positions", whyDebug, withheldDebug),
	open("Debugger.pause", whyDebug, withheldDebug),
	open("Debugger.resume terminateOnResume", whyDebug, withheldDebug),
	open("Debugger.stepInto breakOnAsyncCall skipList", whyDebug, withheldDebug),
	open("Debugger.stepOut", whyDebug, withheldDebug),
	open("Debugger.stepOver skipList", whyDebug, withheldDebug),
	open("Debugger.continueToLocation location targetCallFrames", whyDebug, withheldDebug),
	open("Debugger.evaluateOnCallFrame callFrameId expression objectGroup includeCommandLineAPI=false silent returnByValue generatePreview throwOnSideEffect timeout", whyDebug+"; no command-line API", withheldDebug),
	open("Debugger.restartFrame callFrameId mode", whyDebug, withheldDebug),
	open("Debugger.setVariableValue scopeNumber variableName newValue callFrameId", whyDebug, withheldDebug),
	open("Debugger.setReturnValue newValue", whyDebug, withheldDebug),
	open("Debugger.getStackTrace stackTraceId", whyDebug, withheldDebug),
	open("Debugger.disassembleWasmModule scriptId", whyDebug, withheldDebug),
	open("Debugger.nextWasmDisassemblyChunk streamId", whyDebug, withheldDebug),
	open("EventBreakpoints.setInstrumentationBreakpoint eventName", whyDebug, withheldDebug),
	open("EventBreakpoints.removeInstrumentationBreakpoint eventName", whyDebug, withheldDebug),
	open("EventBreakpoints.disable", whyDebug, withheldDebug),

	// Profiling.
	open("Profiler.enable", whyProfile, withheldLowValue),
	open("Profiler.disable", whyProfile, withheldLowValue),
	open("Profiler.start", whyProfile, withheldLowValue),
	open("Profiler.stop", whyProfile, withheldLowValue),
	open("Profiler.setSamplingInterval interval", whyProfile, withheldLowValue),
	open("Profiler.startPreciseCoverage callCount detailed allowTriggeredUpdates", whyProfile, withheldLowValue),
	open("Profiler.stopPreciseCoverage", whyProfile, withheldLowValue),
	open("Profiler.takePreciseCoverage", whyProfile, withheldLowValue),
	open("Profiler.getBestEffortCoverage", whyProfile, withheldLowValue),
	open("Performance.enable timeDomain", whyProfile, withheldLowValue),
	open("Performance.disable", whyProfile, withheldLowValue),
	open("Performance.getMetrics", whyProfile, withheldLowValue),

	// Emulation: state of this tab, cleared with the raw session.
	open("Emulation.setDeviceMetricsOverride width height deviceScaleFactor mobile scale screenWidth screenHeight positionX positionY dontSetVisibleSize screenOrientation viewport scrollbarType screenOrientationLockEmulation viewportMeta textLayoutMode", whyEmulate, withheldState),
	open("Emulation.clearDeviceMetricsOverride", whyEmulate, withheldState),
	open("Emulation.setGeolocationOverride latitude longitude accuracy altitude altitudeAccuracy heading speed", whyEmulate, withheldState),
	open("Emulation.clearGeolocationOverride", whyEmulate, withheldState),
	open("Emulation.setIdleOverride isUserActive isScreenUnlocked", whyEmulate, withheldState),
	open("Emulation.clearIdleOverride", whyEmulate, withheldState),
	open("Emulation.setUserAgentOverride userAgent acceptLanguage platform userAgentMetadata", whyEmulate, withheldState),
	open("Emulation.setLocaleOverride locale", whyEmulate, withheldState),
	open("Emulation.setTimezoneOverride timezoneId", whyEmulate, withheldState),
	open("Emulation.setEmulatedMedia media features", whyEmulate, withheldState),
	open("Emulation.setEmulatedVisionDeficiency type", whyEmulate, withheldState),
	open("Emulation.setEmulatedOSTextScale scale", whyEmulate, withheldState),
	open("Emulation.setAutoDarkModeOverride enabled", whyEmulate, withheldState),
	open("Emulation.setCPUThrottlingRate rate", whyEmulate, withheldState),
	open("Emulation.setDefaultBackgroundColorOverride color", whyEmulate, withheldState),
	open("Emulation.setFocusEmulationEnabled enabled", whyEmulate, withheldState),
	open("Emulation.setHardwareConcurrencyOverride hardwareConcurrency", whyEmulate, withheldState),
	open("Emulation.setPageScaleFactor pageScaleFactor", whyEmulate, withheldState),
	open("Emulation.resetPageScaleFactor", whyEmulate, withheldState),
	open("Emulation.setScriptExecutionDisabled value", whyEmulate, withheldState),
	open("Emulation.setScrollbarsHidden hidden", whyEmulate, withheldState),
	open("Emulation.setTouchEmulationEnabled enabled maxTouchPoints", whyEmulate, withheldState),
	open("Emulation.setEmitTouchEventsForMouse enabled configuration", whyEmulate, withheldState),
	open("Emulation.setDocumentCookieDisabled disabled", whyEmulate, withheldState),
	open("Emulation.setDisabledImageTypes imageTypes", whyEmulate, withheldState),
	open("Emulation.setAutomationOverride enabled", whyEmulate, withheldState),
	open("Emulation.setDataSaverOverride dataSaverEnabled", whyEmulate, withheldState),
	open("Emulation.setDevicePostureOverride posture", whyEmulate, withheldState),
	open("Emulation.clearDevicePostureOverride", whyEmulate, withheldState),
	open("Emulation.setDisplayFeaturesOverride features", whyEmulate, withheldState),
	open("Emulation.clearDisplayFeaturesOverride", whyEmulate, withheldState),
	open("Emulation.setSafeAreaInsetsOverride insets", whyEmulate, withheldState),
	open("Emulation.setSensorOverrideEnabled enabled type metadata", whyEmulate, withheldState),
	open("Emulation.setSensorOverrideReadings type reading", whyEmulate, withheldState),
	open("Emulation.getOverriddenSensorInformation type", whyEmulate, withheldState),
	open("Emulation.setPressureSourceOverrideEnabled enabled source metadata", whyEmulate, withheldState),
	open("Emulation.setPressureStateOverride source state", whyEmulate, withheldState),
	open("Emulation.setVirtualKeyboardGeometryOverride keyboardRect", whyEmulate, withheldState),
	open("Emulation.setSmallViewportHeightDifferenceOverride difference", whyEmulate, withheldState),
	open("DeviceOrientation.setDeviceOrientationOverride alpha beta gamma", whyEmulate, withheldState),
	open("DeviceOrientation.clearDeviceOrientationOverride", whyEmulate, withheldState),

	// Network: how this tab's requests go (no cookies, no bodies).
	open("Network.enable maxTotalBufferSize maxResourceBufferSize maxPostDataSize reportDirectSocketTraffic enableDurableMessages", whyPlumbing, withheldState),
	open("Network.disable", whyPlumbing, withheldState),
	open("Network.setCacheDisabled cacheDisabled", whyNetwork, withheldState),
	open("Network.setBypassServiceWorker bypass", whyNetwork, withheldState),
	open("Network.setExtraHTTPHeaders headers", whyNetwork, withheldState),
	open("Network.setBlockedURLs urlPatterns", whyNetwork, withheldState),
	open("Network.emulateNetworkConditionsByRule emulateOfflineServiceWorker matchedNetworkConditions", whyNetwork, withheldState),
	open("Network.overrideNetworkState offline latency downloadThroughput uploadThroughput connectionType", whyNetwork, withheldState),
	open("Network.setAttachDebugStack enabled", whyNetwork, withheldState),
	open("Network.getRequestPostData requestId", "the body this page itself sent in a request", "the request may be a frame's of a denied origin"),
	open("Network.replayXHR requestId", "repeats a request this page itself made", "the request may be a frame's of a denied origin"),

	// Input: as the person would.
	open("Input.dispatchKeyEvent type modifiers timestamp text unmodifiedText keyIdentifier code key windowsVirtualKeyCode nativeVirtualKeyCode autoRepeat isKeypad isSystemKey location", whyInput+"; no editing commands (a paste command reads the system clipboard into the page)", withheldInput),
	open("Input.dispatchMouseEvent type x y modifiers timestamp button buttons clickCount force tangentialPressure tiltX tiltY twist deltaX deltaY pointerType", whyInput, withheldInput),
	open("Input.dispatchTouchEvent type touchPoints modifiers timestamp", whyInput, withheldInput),
	open("Input.emulateTouchFromMouseEvent type x y button timestamp deltaX deltaY modifiers clickCount", whyInput, withheldInput),
	open("Input.insertText text", whyInput, withheldInput),
	open("Input.imeSetComposition text selectionStart selectionEnd replacementStart replacementEnd", whyInput, withheldInput),
	open("Input.cancelDragging", whyInput, withheldInput),
	open("Input.synthesizeTapGesture x y duration tapCount gestureSourceType", whyInput, withheldInput),
	open("Input.synthesizeScrollGesture x y xDistance yDistance xOverscroll yOverscroll preventFling speed gestureSourceType repeatCount repeatDelayMs interactionMarkerName", whyInput, withheldInput),
	open("Input.synthesizePinchGesture x y scaleFactor relativeSpeed gestureSourceType", whyInput, withheldInput),

	// Page: this tab.
	open("Page.enable enableFileChooserOpenedEvent", whyPlumbing, withheldLowValue),
	open("Page.disable", whyPlumbing, withheldLowValue),
	open("Page.setLifecycleEventsEnabled enabled", whyPlumbing, withheldLowValue),
	both("Page.reload ignoreCache scriptToEvaluateOnLoad loaderId", whyPage+"; reloads the URL the gate already judged",
		"ignoreCache", "reloads the URL the gate already judged; no script for the reloaded document"),
	both("Page.stopLoading", whyPage, "-", "stops loading; reads nothing"),
	both("Page.getLayoutMetrics", "the page's viewport and content size", "-", "the main document's viewport and content size"),
	open("Page.bringToFront", whyPage, withheldTab),
	open("Page.close", "closes this tab, which webcodex launched", withheldTab),
	open("Page.captureScreenshot format quality clip fromSurface captureBeyondViewport optimizeForSpeed", whyRender, withheldScreen),
	open("Page.captureSnapshot format", whyRender+"; with every frame, each of an origin the open web allows", withheldSerialize),
	open("Page.printToPDF landscape displayHeaderFooter printBackground scale paperWidth paperHeight marginTop marginBottom marginLeft marginRight pageRanges headerTemplate footerTemplate preferCSSPageSize transferMode generateTaggedPDF generateDocumentOutline", whyRender, withheldSerialize),
	open("Page.getAppManifest manifestId", "the main document's web app manifest", withheldLowValue),
	open("Page.getInstallabilityErrors", "whether the main document is an installable app", withheldLowValue),
	open("Page.getNavigationHistory", "this tab's history; on the open web every entry is of an allowed origin", withheldHistory),
	open("Page.resetNavigationHistory", "clears this tab's history", withheldHistory),
	open("Page.handleJavaScriptDialog accept promptText", whyDialog, withheldDialog),
	open("Page.setInterceptFileChooserDialog enabled cancel", "only reports the file chooser; handing it files needs DOM.setFileInputFiles, which is refused", withheldState),
	open("Page.setBypassCSP enabled", "disables this page's own CSP; script already runs through evaluate", withheldState),
	open("Page.setWebLifecycleState state", "freezes or resumes this tab, as a background tab is", withheldState),
	open("Page.addScriptToEvaluateOnNewDocument source runImmediately includeCommandLineAPI=false", whyPlantOpen, withheldPlant),
	open("Page.removeScriptToEvaluateOnNewDocument identifier", whyPlantOpen, withheldPlant),

	// Overlay: highlights only.
	open("Overlay.enable", whyOverlay, withheldIDs),
	open("Overlay.disable", whyOverlay, withheldIDs),
	open("Overlay.hideHighlight", whyOverlay, withheldIDs),
	open("Overlay.highlightNode highlightConfig nodeId backendNodeId objectId selector", whyOverlay, withheldIDs),
	open("Overlay.highlightQuad quad color outlineColor", whyOverlay, withheldIDs),
	open("Overlay.highlightRect x y width height color outlineColor", whyOverlay, withheldIDs),
	open("Overlay.setShowDebugBorders show", whyOverlay, withheldIDs),
	open("Overlay.setShowFPSCounter show", whyOverlay, withheldIDs),
	open("Overlay.setShowPaintRects result", whyOverlay, withheldIDs),
	open("Overlay.setShowLayoutShiftRegions result", whyOverlay, withheldIDs),
	open("Overlay.setShowScrollBottleneckRects show", whyOverlay, withheldIDs),
	open("Overlay.setShowViewportSizeOnResize show", whyOverlay, withheldIDs),
	open("Overlay.setPausedInDebuggerMessage message", whyOverlay, withheldIDs),

	// Plumbing and page-scoped helpers.
	open("Log.enable", whyPlumbing, withheldLowValue),
	open("Log.disable", whyPlumbing, withheldLowValue),
	open("Log.clear", whyPlumbing, withheldLowValue),
	open("Log.startViolationsReport config", whyPlumbing, withheldLowValue),
	open("Log.stopViolationsReport", whyPlumbing, withheldLowValue),
	open("Inspector.enable", whyPlumbing, withheldLowValue),
	open("Inspector.disable", whyPlumbing, withheldLowValue),
	open("Security.enable", whyPlumbing, withheldLowValue),
	open("Security.disable", whyPlumbing, withheldLowValue),
	open("Audits.enable", whyPlumbing, withheldLowValue),
	open("Audits.disable", whyPlumbing, withheldLowValue),
	open("Audits.checkFormsIssues", "reports form issues of this page", withheldLowValue),
	open("IO.read handle offset size", whyStream, withheldSerialize),
	open("IO.close handle", whyStream, withheldSerialize),

	// Prompts and virtual devices of this tab.
	open("FedCm.enable disableRejectionDelay", whyDialog, withheldDialog),
	open("FedCm.disable", whyDialog, withheldDialog),
	open("FedCm.selectAccount dialogId accountIndex", whyDialog, withheldDialog),
	open("FedCm.clickDialogButton dialogId dialogButton", whyDialog, withheldDialog),
	open("FedCm.dismissDialog dialogId triggerCooldown", whyDialog, withheldDialog),
	open("FedCm.resetCooldown", whyDialog, withheldDialog),
	open("DeviceAccess.enable", whyDialog, withheldDialog),
	open("DeviceAccess.disable", whyDialog, withheldDialog),
	open("DeviceAccess.selectPrompt id deviceId", whyDialog, withheldDialog),
	open("DeviceAccess.cancelPrompt id", whyDialog, withheldDialog),
	open("WebAuthn.enable enableUI", whyAuthn, withheldState),
	open("WebAuthn.disable", whyAuthn, withheldState),
	open("WebAuthn.addVirtualAuthenticator options", whyAuthn, withheldState),
	open("WebAuthn.removeVirtualAuthenticator authenticatorId", whyAuthn, withheldState),
	open("WebAuthn.addCredential authenticatorId credential", whyAuthn, withheldState),
	open("WebAuthn.getCredential authenticatorId credentialId", whyAuthn, withheldState),
	open("WebAuthn.getCredentials authenticatorId", whyAuthn, withheldState),
	open("WebAuthn.removeCredential authenticatorId credentialId", whyAuthn, withheldState),
	open("WebAuthn.clearCredentials authenticatorId", whyAuthn, withheldState),
	open("WebAuthn.setUserVerified authenticatorId isUserVerified", whyAuthn, withheldState),
	open("WebAuthn.setAutomaticPresenceSimulation authenticatorId enabled", whyAuthn, withheldState),
	open("WebAuthn.setResponseOverrideBits authenticatorId isBogusSignature isBadUV isBadUP", whyAuthn, withheldState),
	open("WebAuthn.setCredentialProperties authenticatorId credentialId backupEligibility backupState", whyAuthn, withheldState),
}
