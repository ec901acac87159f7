/* One syr2k kernel variant, included by variants.c once per combination of
 * INTERCHANGE, PACK_A and PACK_B (each 0 or 1) with KERNEL_NAME set. The
 * preprocessor, not the optimiser, removes the branches, so Polly sees each
 * variant as one clean static-control loop nest. */
static void KERNEL_NAME(int n, int m, double alpha, double beta, double C[n][n],
			double A[n][m], double B[n][m], double PA[m][n], double PB[m][n]) {
#if PACK_A
	for (int j = 0; j < n; j++)
		for (int k = 0; k < m; k++)
			PA[k][j] = A[j][k];
#define AJK(j, k) PA[k][j]
#else
#define AJK(j, k) A[j][k]
#endif
#if PACK_B
	for (int j = 0; j < n; j++)
		for (int k = 0; k < m; k++)
			PB[k][j] = B[j][k];
#define BJK(j, k) PB[k][j]
#else
#define BJK(j, k) B[j][k]
#endif
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			C[i][j] *= beta;
#if INTERCHANGE
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			for (int k = 0; k < m; k++)
				C[i][j] += AJK(j, k) * alpha * B[i][k] + BJK(j, k) * alpha * A[i][k];
#else
	for (int i = 0; i < n; i++)
		for (int k = 0; k < m; k++)
			for (int j = 0; j <= i; j++)
				C[i][j] += AJK(j, k) * alpha * B[i][k] + BJK(j, k) * alpha * A[i][k];
#endif
#undef AJK
#undef BJK
}
