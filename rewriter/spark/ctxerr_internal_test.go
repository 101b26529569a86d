package spark

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCtxErrSeesTheDeadlineThroughSparkErrors covers the race in which
// the server's copy of the deadline ends the stream a moment before the
// client context's timer fires: the error then carries DeadlineExceeded
// while ctx.Err() is still nil, and it reaches us wrapped by
// spark-connect-go, whose SparkError hides the gRPC status from
// status.Code.
func TestCtxErrSeesTheDeadlineThroughSparkErrors(t *testing.T) {
	rpc := status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM with error code: CANCEL")
	wrapped := fmt.Errorf("failed to execute sql: %w",
		sparkerrors.WithType(sparkerrors.FromRPCError(rpc), sparkerrors.ExecutionError))
	require.Equal(t, codes.Unknown, status.Code(wrapped), "the wrapper hides the status (if this changes, grpcCode can go)")

	tests := []struct {
		name string
		err  error
		want error
	}{
		{"grpc status", rpc, context.DeadlineExceeded},
		{"spark error", wrapped, context.DeadlineExceeded},
		{"other failure", fmt.Errorf("x: %w", sparkerrors.FromRPCError(status.Error(codes.NotFound, "no table"))), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
			defer cancel()
			got := ctxErr(ctx, tt.err)
			if tt.want == nil {
				require.NoError(t, got)
				return
			}
			require.True(t, errors.Is(got, tt.want), "got %v", got)
		})
	}
}
