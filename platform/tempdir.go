package platform

// SocketPathMax is the longest path a unix socket can bind on Linux:
// sun_path holds 108 bytes, the last of them the terminating NUL.
const SocketPathMax = 107

// chromiumSocketTail is the longest path Chromium binds under its TMPDIR:
// its singleton socket, in a directory it makes there. Chromium 156 names
// it "org.chromium.Chromium.XXXXXX/SingletonSocket"; earlier ones and
// Google Chrome ("com.google.Chrome.XXXXXX") use a leading dot or a
// shorter name, so this is the longest of them. A TMPDIR longer than
// SocketPathMax minus this makes Chromium abort at start-up ("Socket path
// too long").
const chromiumSocketTail = "/.org.chromium.Chromium.XXXXXX/SingletonSocket"

// mkdirTempSuffix is the most bytes [os.MkdirTemp] adds to a pattern (a
// random uint32 in decimal).
const mkdirTempSuffix = 10

// browserTmpPattern names the browser's private TMPDIR inside
// LaunchOptions.TempParent.
const browserTmpPattern = "tmp-"

// TempParentRoom is how many bytes [Launch] adds below
// LaunchOptions.TempParent to the longest path Chromium binds: a caller
// making that directory passes it to [ShortTempDir].
const TempParentRoom = 1 + len(browserTmpPattern) + mkdirTempSuffix + len(chromiumSocketTail)

// fitsSocket reports whether a socket at dir plus room bytes can bind.
func fitsSocket(dir string, room int) bool { return len(dir)+room <= SocketPathMax }
