import java.util.*;
public class Main {
    public static void main(String[] args ) {
        Scanner in = new Scanner(System.in);
        int t = in.nextInt();
        in.nextLine();
        while ( t-- > 0 ) {
            System.out.println( new StringBuffer(in.nextLine()).reverse
               ());
        }
    }
}
