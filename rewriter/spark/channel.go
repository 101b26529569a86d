package spark

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The Spark Connect service and the methods floe calls itself. The client
// library has no interrupt or release call, so the engine sends them on
// the client's own connection, building the requests from the message
// types the client's generated code registers by name.
const (
	service              = "spark.connect.SparkConnectService"
	methodExecutePlan    = "/" + service + "/ExecutePlan"
	methodInterrupt      = "/" + service + "/Interrupt"
	methodReleaseSession = "/" + service + "/ReleaseSession"
)

// channel builds the client's gRPC connection (it implements the client's
// channel.Builder) and keeps it, so the engine can send Interrupt and
// ReleaseSession on it and watch every ExecutePlan request go out.
type channel struct {
	remote remote
	tls    *tls.Config

	mu        sync.Mutex
	conn      *grpc.ClientConn
	sessionID string // learned from the first request
	userID    string
}

func (c *channel) Build(context.Context) (*grpc.ClientConn, error) {
	opts := []grpc.DialOption{
		grpc.WithAuthority(c.remote.host),
		grpc.WithStreamInterceptor(c.watch),
	}
	if c.remote.token != "" || c.remote.useSSL {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.tls != nil {
			cfg = c.tls.Clone()
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.remote.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(c.remote.token)))
	}
	addr := net.JoinHostPort(c.remote.host, strconv.Itoa(c.remote.port))
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	return conn, nil
}

func (c *channel) User() string { return c.remote.user }

func (c *channel) Headers() map[string]string { return c.remote.headers }

func (c *channel) SessionId() string { return "" } //nolint:revive // the client's interface names it so

func (c *channel) UserAgent() string {
	if c.remote.userAgent != "" {
		return c.remote.userAgent
	}
	return "floe"
}

// bearer is a token sent as "authorization: Bearer …" on every call, only
// over TLS. Its String never prints it.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

func (bearer) String() string { return "REDACTED" }

// tracker follows one statement's ExecutePlan calls: the engine puts it in
// the statement's context and the interceptor fills it in as each request
// goes out, tagging the request with the statement's tag.
type tracker struct {
	tag string

	mu  sync.Mutex
	ops []string
}

type trackerKey struct{}

// operations returns the operation ids sent so far, oldest first.
func (t *tracker) operations() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.ops...)
}

// watch is the stream interceptor: on each ExecutePlan request it adds the
// statement's tag and records the operation id the client chose, before
// the request is sent, so that the engine can interrupt it by id.
func (c *channel) watch(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption,
) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != methodExecutePlan {
		return s, err
	}
	tr, _ := ctx.Value(trackerKey{}).(*tracker)
	return &watchedStream{ClientStream: s, ch: c, tr: tr}, nil
}

type watchedStream struct {
	grpc.ClientStream
	ch *channel
	tr *tracker
}

func (w *watchedStream) SendMsg(m any) error {
	if pm, ok := m.(proto.Message); ok {
		msg := pm.ProtoReflect()
		fields := msg.Descriptor().Fields()
		if fd := fields.ByName("session_id"); fd != nil {
			w.ch.mu.Lock()
			if w.ch.sessionID == "" {
				w.ch.sessionID = msg.Get(fd).String()
				if uc := fields.ByName("user_context"); uc != nil && msg.Has(uc) {
					um := msg.Get(uc).Message()
					if uid := um.Descriptor().Fields().ByName("user_id"); uid != nil {
						w.ch.userID = um.Get(uid).String()
					}
				}
			}
			w.ch.mu.Unlock()
		}
		if w.tr != nil {
			if fd := fields.ByName("tags"); fd != nil && w.tr.tag != "" {
				msg.Mutable(fd).List().Append(protoreflect.ValueOfString(w.tr.tag))
			}
			if fd := fields.ByName("operation_id"); fd != nil && msg.Has(fd) {
				w.tr.mu.Lock()
				w.tr.ops = append(w.tr.ops, msg.Get(fd).String())
				w.tr.mu.Unlock()
			}
		}
	}
	return w.ClientStream.SendMsg(m)
}

// session returns the session and user ids the client sent, "" before
// its first request.
func (c *channel) session() (sessionID, userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID, c.userID
}

// newRequest is an empty request message of the registered type name,
// with the session and user filled in.
func (c *channel) newRequest(name protoreflect.FullName) (protoreflect.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, fmt.Errorf("spark connect message %s not registered: %w", name, err)
	}
	msg := mt.New()
	sid, uid := c.session()
	fields := msg.Descriptor().Fields()
	msg.Set(fields.ByName("session_id"), protoreflect.ValueOfString(sid))
	if fd := fields.ByName("user_context"); fd != nil {
		uc := msg.Mutable(fd).Message()
		uc.Set(uc.Descriptor().Fields().ByName("user_id"), protoreflect.ValueOfString(uid))
	}
	return msg, nil
}

// responseOf is an empty message of the method's response type.
func responseOf(name protoreflect.FullName) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, fmt.Errorf("spark connect message %s not registered: %w", name, err)
	}
	return mt.New().Interface(), nil
}

// interrupt asks the server to interrupt operation opID of this session
// (Spark Connect's Interrupt with INTERRUPT_TYPE_OPERATION_ID), or, with
// opID empty, every operation tagged tag.
func (c *channel) interrupt(ctx context.Context, headers map[string]string, opID, tag string) error {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return errors.New("not connected")
	}
	req, err := c.newRequest("spark.connect.InterruptRequest")
	if err != nil {
		return err
	}
	fields := req.Descriptor().Fields()
	typ := fields.ByName("interrupt_type")
	if opID != "" {
		req.Set(typ, protoreflect.ValueOfEnum(typ.Enum().Values().ByName("INTERRUPT_TYPE_OPERATION_ID").Number()))
		req.Set(fields.ByName("operation_id"), protoreflect.ValueOfString(opID))
	} else {
		req.Set(typ, protoreflect.ValueOfEnum(typ.Enum().Values().ByName("INTERRUPT_TYPE_TAG").Number()))
		req.Set(fields.ByName("operation_tag"), protoreflect.ValueOfString(tag))
	}
	resp, err := responseOf("spark.connect.InterruptResponse")
	if err != nil {
		return err
	}
	return conn.Invoke(withHeaders(ctx, headers), methodInterrupt, req.Interface(), resp)
}

// release ends the server-side session, if the client ever opened one.
func (c *channel) release(ctx context.Context, headers map[string]string) error {
	c.mu.Lock()
	conn, sid := c.conn, c.sessionID
	c.mu.Unlock()
	if conn == nil || sid == "" {
		return nil
	}
	req, err := c.newRequest("spark.connect.ReleaseSessionRequest")
	if err != nil {
		return err
	}
	resp, err := responseOf("spark.connect.ReleaseSessionResponse")
	if err != nil {
		return err
	}
	return conn.Invoke(withHeaders(ctx, headers), methodReleaseSession, req.Interface(), resp)
}

func (c *channel) close() error {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn == nil {
		return nil
	}
	return conn.Close()
}

func withHeaders(ctx context.Context, headers map[string]string) context.Context {
	if len(headers) == 0 {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, metadata.New(headers))
}
