package sparktest

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Service is the Spark Connect gRPC service the fake serves.
const Service = "spark.connect.SparkConnectService"

// Result is what the fake answers one statement with.
type Result struct {
	// Columns and Rows are the result rows; see [Rows].
	Columns []string
	Rows    [][]any
	// Err, when set, fails the statement with this Spark error instead.
	Err *Error
	// Block makes the statement run until it is interrupted or its stream
	// is cancelled (a slow rewrite).
	Block bool
}

// Rows is a result of the named columns. Values may be int32, int64,
// string, bool or nil; a column's type is its first non-nil value's
// (string when all are nil).
func Rows(columns []string, rows ...[]any) Result {
	return Result{Columns: columns, Rows: rows}
}

// Error is a Spark error as Spark Connect sends it: a gRPC status with the
// message, and an ErrorInfo detail with the error class and SQL state.
type Error struct {
	Code       codes.Code // Default: codes.Internal, as Spark sends.
	ErrorClass string
	SQLState   string
	Message    string
}

// Interrupt is one Interrupt request the fake received.
type Interrupt struct {
	SessionID   string
	Type        string // INTERRUPT_TYPE_ALL, _TAG or _OPERATION_ID
	OperationID string
	Tag         string
	// Interrupted are the running operations it stopped.
	Interrupted []string
}

// Operation is one ExecutePlan the fake received.
type Operation struct {
	ID        string
	SessionID string
	Tags      []string
	// SQL is the SQL command's text; "" for a relation (the client's
	// fetch of a command's result rows).
	SQL string
	// Cancelled is set when the client cancelled the stream before the
	// operation finished.
	Cancelled bool
	// Interrupted is set when an Interrupt stopped it.
	Interrupted bool
}

type handler struct {
	match string
	res   Result
}

type running struct {
	op   *Operation
	stop chan struct{}
	once sync.Once
}

// Server is an in-process Spark Connect server. It answers ExecutePlan for
// SQL commands with the results given to [Server.Handle], Interrupt,
// AnalyzePlan, Config and ReleaseSession, and records what it received.
type Server struct {
	srv  *grpc.Server
	lis  net.Listener
	svc  protoreflect.ServiceDescriptor
	tls  *tls.Config // client side, when serving TLS
	wg   sync.WaitGroup
	done chan struct{}

	mu          sync.Mutex
	handlers    []handler
	ops         []*Operation
	running     map[string]*running
	interrupts  []Interrupt
	released    []string
	auth        []string
	blocked     chan string
	serverSide  string
	requireAuth string
	conns       []*grpc.ClientConn // of [Server.Session]
}

// Option configures a [Server].
type Option func(*Server) error

// WithTLS serves TLS with a fresh self-signed certificate for 127.0.0.1;
// [Server.ClientTLS] is the client configuration that trusts it.
func WithTLS() Option {
	return func(s *Server) error {
		srvCfg, cliCfg, err := selfSigned()
		if err != nil {
			return err
		}
		s.tls = cliCfg
		s.srv = grpc.NewServer(grpc.UnknownServiceHandler(s.handle), grpc.Creds(credentials.NewTLS(srvCfg)))
		return nil
	}
}

// WithToken makes every call without "authorization: Bearer token" fail
// as Unauthenticated.
func WithToken(token string) Option {
	return func(s *Server) error {
		s.requireAuth = "Bearer " + token
		return nil
	}
}

// Start serves on a loopback port until tb's cleanup.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatalf("sparktest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// New serves on a loopback port until [Server.Stop].
func New(opts ...Option) (*Server, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(Service)
	if err != nil {
		return nil, fmt.Errorf("%s not registered (link github.com/apache/spark-connect-go/spark/sql): %w", Service, err)
	}
	s := &Server{
		svc:        d.(protoreflect.ServiceDescriptor),
		running:    map[string]*running{},
		blocked:    make(chan string, 16),
		done:       make(chan struct{}),
		serverSide: uuid.NewString(),
	}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.srv == nil {
		s.srv = grpc.NewServer(grpc.UnknownServiceHandler(s.handle))
	}
	s.lis, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(s.lis)
	}()
	return s, nil
}

// Stop ends every call and the listener, and waits for them.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
		close(s.done)
	}
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	s.srv.Stop()
	s.wg.Wait()
}

// Remote is the connection string of the server, with params ("token=…",
// "use_ssl=true") appended.
func (s *Server) Remote(params ...string) string {
	r := "sc://" + s.lis.Addr().String()
	if len(params) > 0 {
		r += "/;" + strings.Join(params, ";")
	}
	return r
}

// ClientTLS is the client TLS configuration trusting the server's
// certificate, nil without [WithTLS].
func (s *Server) ClientTLS() *tls.Config { return s.tls }

// Session opens a raw client session on the server (plain connections
// only), for tests of the fake itself. The client's session has no way to
// close its connection; [Server.Stop] closes it.
func (s *Server) Session(ctx context.Context) (sql.SparkSession, error) {
	return sql.NewSessionBuilder().WithChannelBuilder(rawChannel{s}).Remote(s.Remote()).Build(ctx)
}

// rawChannel is the client's channel.Builder for [Server.Session].
type rawChannel struct{ s *Server }

func (c rawChannel) Build(context.Context) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(c.s.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	c.s.mu.Lock()
	c.s.conns = append(c.s.conns, conn)
	c.s.mu.Unlock()
	return conn, nil
}

func (rawChannel) User() string               { return "sparktest" }
func (rawChannel) Headers() map[string]string { return nil }
func (rawChannel) SessionId() string          { return "" } //nolint:revive // the client's name
func (rawChannel) UserAgent() string          { return "sparktest" }

// Handle answers every SQL command containing match with res; the handler
// added last wins. Unmatched commands succeed with no rows, except
// "SELECT 1", which returns one row.
func (s *Server) Handle(match string, res Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = append(s.handlers, handler{match, res})
}

// Statements are the SQL commands received, in order.
func (s *Server) Statements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, op := range s.ops {
		if op.SQL != "" {
			out = append(out, op.SQL)
		}
	}
	return out
}

// Operations are the ExecutePlan calls received, in order.
func (s *Server) Operations() []Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Operation, len(s.ops))
	for i, op := range s.ops {
		out[i] = *op
	}
	return out
}

// Interrupts are the Interrupt calls received, in order.
func (s *Server) Interrupts() []Interrupt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Interrupt(nil), s.interrupts...)
}

// Released are the sessions released, in order.
func (s *Server) Released() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.released...)
}

// Authorizations are the authorization headers received, one per call.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// Blocked receives the operation id of each blocking statement as it
// starts to block.
func (s *Server) Blocked() <-chan string { return s.blocked }

// handle serves every method of the service.
func (s *Server) handle(_ any, stream grpc.ServerStream) error {
	full, ok := grpc.MethodFromServerStream(stream)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	svc, name, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	if svc != Service {
		return status.Errorf(codes.Unimplemented, "unknown service %s", svc)
	}
	md := s.svc.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return status.Errorf(codes.Unimplemented, "unknown method %s", name)
	}
	if err := s.authorize(stream.Context()); err != nil {
		return err
	}
	req := dynamicpb.NewMessage(md.Input())
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	resp := dynamicpb.NewMessage(md.Output())
	switch name {
	case "ExecutePlan":
		return s.executePlan(stream, req, md.Output())
	case "Interrupt":
		s.interrupt(req, resp)
	case "ReleaseSession":
		sid := str(req, "session_id")
		s.mu.Lock()
		s.released = append(s.released, sid)
		s.mu.Unlock()
		set(resp, "session_id", sid)
		set(resp, "server_side_session_id", s.serverSide)
	case "AnalyzePlan":
		set(resp, "session_id", str(req, "session_id"))
		set(resp, "server_side_session_id", s.serverSide)
		if req.Has(fd(req, "spark_version")) {
			set(mut(resp, "spark_version"), "version", "3.5.6")
		}
	case "Config":
		set(resp, "session_id", str(req, "session_id"))
		set(resp, "server_side_session_id", s.serverSide)
	default:
		return status.Errorf(codes.Unimplemented, "sparktest: %s not implemented", name)
	}
	return stream.SendMsg(resp)
}

func (s *Server) authorize(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	got := strings.Join(md.Get("authorization"), ",")
	s.mu.Lock()
	s.auth = append(s.auth, got)
	want := s.requireAuth
	s.mu.Unlock()
	if want != "" && got != want {
		return status.Error(codes.Unauthenticated, "invalid or missing token")
	}
	return nil
}

func (s *Server) interrupt(req, resp *dynamicpb.Message) {
	in := Interrupt{
		SessionID: str(req, "session_id"),
		Type:      string(fd(req, "interrupt_type").Enum().Values().ByNumber(req.Get(fd(req, "interrupt_type")).Enum()).Name()),
	}
	if req.Has(fd(req, "operation_id")) {
		in.OperationID = str(req, "operation_id")
	}
	if req.Has(fd(req, "operation_tag")) {
		in.Tag = str(req, "operation_tag")
	}
	s.mu.Lock()
	for id, r := range s.running {
		hit := r.op.SessionID == in.SessionID
		switch in.Type {
		case "INTERRUPT_TYPE_OPERATION_ID":
			hit = hit && id == in.OperationID
		case "INTERRUPT_TYPE_TAG":
			hit = hit && contains(r.op.Tags, in.Tag)
		}
		if hit {
			r.op.Interrupted = true
			r.once.Do(func() { close(r.stop) })
			in.Interrupted = append(in.Interrupted, id)
		}
	}
	s.interrupts = append(s.interrupts, in)
	s.mu.Unlock()
	set(resp, "session_id", in.SessionID)
	set(resp, "server_side_session_id", s.serverSide)
	l := resp.Mutable(fd(resp, "interrupted_ids")).List()
	for _, id := range in.Interrupted {
		l.Append(protoreflect.ValueOfString(id))
	}
}

// executePlan answers a SQL command the way Spark Connect does: a command
// (CALL …) runs at once and its rows come back inline as a local relation
// in the SqlCommandResult; a query comes back as a SQL relation. Either
// way the client then executes that relation, and the fake streams its
// rows as one Arrow batch. Every response echoes the session and
// operation ids, and the stream ends with ResultComplete.
func (s *Server) executePlan(stream grpc.ServerStream, req *dynamicpb.Message, out protoreflect.MessageDescriptor) error {
	op := &Operation{ID: str(req, "operation_id"), SessionID: str(req, "session_id")}
	if op.ID == "" {
		op.ID = uuid.NewString()
	}
	tags := req.Get(fd(req, "tags")).List()
	for i := 0; i < tags.Len(); i++ {
		op.Tags = append(op.Tags, tags.Get(i).String())
	}
	plan := req.Get(fd(req, "plan")).Message()
	var (
		res      Result
		command  bool
		relation protoreflect.Message
	)
	switch {
	case plan.Has(fd(plan, "command")):
		cmd := plan.Get(fd(plan, "command")).Message()
		if !cmd.Has(fd(cmd, "sql_command")) {
			return status.Error(codes.Unimplemented, "sparktest: only SQL commands")
		}
		op.SQL = str(cmd.Get(fd(cmd, "sql_command")).Message(), "sql")
		res = s.result(op.SQL)
		command = isCommand(op.SQL)
	case plan.Has(fd(plan, "root")):
		relation = plan.Get(fd(plan, "root")).Message()
	default:
		return status.Error(codes.InvalidArgument, "plan has neither root nor command")
	}
	r := &running{op: op, stop: make(chan struct{})}
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.running[op.ID] = r
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, op.ID)
		s.mu.Unlock()
	}()

	if res.Block {
		select {
		case s.blocked <- op.ID:
		default:
		}
		select {
		case <-r.stop:
			return sparkStatus(&Error{ErrorClass: "OPERATION_CANCELED", SQLState: "HY008", Message: "Operation has been cancelled."})
		case <-stream.Context().Done():
			s.mu.Lock()
			op.Cancelled = true
			s.mu.Unlock()
			return stream.Context().Err()
		case <-s.done:
			return status.Error(codes.Unavailable, "server stopping")
		}
	}
	if res.Err != nil {
		return sparkStatus(res.Err)
	}
	n := 0
	send := func(fill func(m *dynamicpb.Message)) error {
		m := dynamicpb.NewMessage(out)
		set(m, "session_id", op.SessionID)
		set(m, "server_side_session_id", s.serverSide)
		set(m, "operation_id", op.ID)
		n++
		set(m, "response_id", fmt.Sprintf("%s-%d", op.ID, n))
		fill(m)
		return stream.SendMsg(m)
	}
	var err error
	switch {
	case relation != nil:
		var data []byte
		var rows int64
		switch {
		case relation.Has(fd(relation, "local_relation")):
			lr := relation.Get(fd(relation, "local_relation")).Message()
			data = lr.Get(fd(lr, "data")).Bytes()
			rows, err = countRows(data)
		case relation.Has(fd(relation, "sql")):
			q := str(relation.Get(fd(relation, "sql")).Message(), "query")
			r := s.result(q)
			if r.Err != nil {
				return sparkStatus(r.Err)
			}
			data, err = encode(r)
			rows = int64(len(r.Rows))
		default:
			return status.Error(codes.Unimplemented, "sparktest: only local and SQL relations")
		}
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		err = send(func(m *dynamicpb.Message) {
			b := mut(m, "arrow_batch")
			b.Set(fd(b, "row_count"), protoreflect.ValueOfInt64(rows))
			b.Set(fd(b, "data"), protoreflect.ValueOfBytes(data))
		})
	case command:
		var data []byte
		if data, err = encode(res); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		err = send(func(m *dynamicpb.Message) {
			rel := mut(mut(m, "sql_command_result"), "relation")
			lr := mut(rel, "local_relation")
			lr.Set(fd(lr, "data"), protoreflect.ValueOfBytes(data))
		})
	default:
		err = send(func(m *dynamicpb.Message) {
			rel := mut(mut(m, "sql_command_result"), "relation")
			set(mut(rel, "sql"), "query", op.SQL)
		})
	}
	if err != nil {
		return err
	}
	return send(func(m *dynamicpb.Message) { mut(m, "result_complete") })
}

func (s *Server) result(sqlText string) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.handlers) - 1; i >= 0; i-- {
		if strings.Contains(sqlText, s.handlers[i].match) {
			return s.handlers[i].res
		}
	}
	if strings.EqualFold(strings.TrimSpace(sqlText), "SELECT 1") {
		return Rows([]string{"1"}, []any{int32(1)})
	}
	return Result{}
}

// isCommand reports whether Spark would run the statement eagerly as a
// command (CALL, DDL, …) rather than return it as a query relation.
func isCommand(sqlText string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(sqlText), " ")
	switch strings.ToUpper(first) {
	case "SELECT", "WITH", "VALUES", "TABLE", "FROM":
		return false
	}
	return true
}

func sparkStatus(e *Error) error {
	code := e.Code
	if code == codes.OK {
		code = codes.Internal
	}
	st := status.New(code, e.Message)
	if e.ErrorClass != "" || e.SQLState != "" {
		withInfo, err := st.WithDetails(&errdetails.ErrorInfo{
			Reason: "org.apache.spark.SparkException",
			Domain: "org.apache.spark",
			Metadata: map[string]string{
				"errorClass": e.ErrorClass,
				"sqlState":   e.SQLState,
			},
		})
		if err == nil {
			st = withInfo
		}
	}
	return st.Err()
}

// encode builds the result's rows as one Arrow IPC stream (schema and a
// single record batch), as Spark sends an ArrowBatch or a local relation.
func encode(r Result) ([]byte, error) {
	fields := make([]arrow.Field, len(r.Columns))
	for i, c := range r.Columns {
		fields[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true}
		for _, row := range r.Rows {
			if i < len(row) && row[i] != nil {
				switch row[i].(type) {
				case int32:
					fields[i].Type = arrow.PrimitiveTypes.Int32
				case int64:
					fields[i].Type = arrow.PrimitiveTypes.Int64
				case bool:
					fields[i].Type = arrow.FixedWidthTypes.Boolean
				case string:
				default:
					return nil, fmt.Errorf("sparktest: column %s: unsupported value %T", c, row[i])
				}
				break
			}
		}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range r.Rows {
		for i := range fields {
			var v any
			if i < len(row) {
				v = row[i]
			}
			if v == nil {
				b.Field(i).AppendNull()
				continue
			}
			switch fb := b.Field(i).(type) {
			case *array.Int32Builder:
				fb.Append(v.(int32))
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.StringBuilder:
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("sparktest: column %s mixes types", fields[i].Name)
				}
				fb.Append(s)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func countRows(data []byte) (int64, error) {
	rd, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	defer rd.Release()
	var n int64
	for rd.Next() {
		n += rd.RecordBatch().NumRows()
	}
	if err := rd.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return n, err
	}
	return n, nil
}

func fd(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	f := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if f == nil {
		panic(fmt.Sprintf("sparktest: %s has no field %s", m.Descriptor().FullName(), name))
	}
	return f
}

func str(m protoreflect.Message, name string) string { return m.Get(fd(m, name)).String() }

func set(m protoreflect.Message, name, v string) {
	m.Set(fd(m, name), protoreflect.ValueOfString(v))
}

func mut(m protoreflect.Message, name string) protoreflect.Message {
	return m.Mutable(fd(m, name)).Message()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
